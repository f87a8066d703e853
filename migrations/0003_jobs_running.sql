-- 0003_jobs_running.sql — running jobs by experiment: a claim checks that no
-- other job of the experiment is being worked on (one refit per experiment
-- at a time), and this keeps that check an index probe however many
-- finished jobs accumulate.
CREATE INDEX jobs_running ON jobs (experiment_id) WHERE state = 'running';

-- 0012_commits.sql — model sets per commit. An upload may name the commit,
-- branch and CI run it measured; a refit models the profiles of one commit
-- (those without a commit form a series of their own), and its model set
-- remembers them, so that two commits' models can be compared
-- (GET /v1/experiments/{id}/regressions). One queued job per experiment
-- and commit: uploads of one commit join its queued refit, another commit's
-- uploads queue their own.
ALTER TABLE profiles ADD COLUMN commit_sha text, ADD COLUMN branch text, ADD COLUMN ci_run text;
ALTER TABLE jobs ADD COLUMN commit_sha text, ADD COLUMN branch text, ADD COLUMN ci_run text;
ALTER TABLE model_sets ADD COLUMN commit_sha text, ADD COLUMN branch text, ADD COLUMN ci_run text;

DROP INDEX jobs_one_queued;
CREATE UNIQUE INDEX jobs_one_queued ON jobs (experiment_id, coalesce(commit_sha, ''))
    WHERE state = 'queued';
CREATE INDEX model_sets_commit ON model_sets (experiment_id, commit_sha, number);

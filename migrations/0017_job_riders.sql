-- 0017_job_riders.sql — a running refit takes over the experiment's queued
-- job: the queued job "rides with" the running one (rides_with), shows as
-- running, and the refit starts again on a snapshot that includes the
-- queued job's uploads. A rider has no lease of its own (it is neither
-- claimed nor reaped); it is done in the transaction that commits its
-- leader's model set, fails when its leader fails for good, and follows the
-- job its leader's uploads are handed to.
ALTER TABLE jobs ADD COLUMN rides_with bigint REFERENCES jobs(id) ON DELETE CASCADE;
CREATE INDEX jobs_riders ON jobs (rides_with) WHERE rides_with IS NOT NULL;

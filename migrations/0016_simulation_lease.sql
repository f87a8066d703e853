-- 0016_simulation_lease.sql — queued simulation runs get the lease of refit
-- jobs: the worker that claims a run holds it until lease_until and renews
-- it while the simulation runs; a run whose lease expired (its worker died)
-- is claimed again, at most max_attempts times in all, and then failed.
-- The outcome of a run is recorded only by the (worker, attempts) holding
-- it, so a worker that lost its lease cannot overwrite the next one's.
ALTER TABLE sim_runs
    ADD COLUMN worker       text,
    ADD COLUMN attempts     integer NOT NULL DEFAULT 0,
    ADD COLUMN max_attempts integer NOT NULL DEFAULT 3 CHECK (max_attempts > 0),
    ADD COLUMN lease_until  timestamptz;
-- runs queued before this migration that a worker was running: their
-- lease is already over, so the next claim takes them again
UPDATE sim_runs SET lease_until = now(), attempts = 1 WHERE state = 'running';
CREATE INDEX sim_runs_running ON sim_runs (lease_until) WHERE state = 'running';

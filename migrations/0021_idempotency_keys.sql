-- 0021_idempotency_keys.sql — the Idempotency-Key of POST requests that
-- create work (api/idempotency.c, store/idempotency.c): per tenant and key
-- the request's fingerprint (method, path, query and body, SHA-256) and,
-- once answered, the answer (status, media type, Location, body) that a
-- retry with the same key gets again. A row is 'pending' while its first
-- request runs; one whose holder died is taken over after locked_until.
-- Rows expire at expires_at (PERFCAST_IDEMPOTENCY_TTL) and are purged then.
-- In the database, not in memory, so that keys outlive a restart and hold
-- across server processes sharing it.
CREATE TABLE idempotency_keys (
    tenant_id     bigint      NOT NULL,
    key           text        NOT NULL,
    fingerprint   bytea       NOT NULL,
    route         text        NOT NULL,
    state         text        NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'done')),
    status        integer,
    content_type  text,
    location      text,
    body          bytea,
    created_at    timestamptz NOT NULL DEFAULT now(),
    locked_until  timestamptz NOT NULL,
    expires_at    timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, key)
);
CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at);

-- Trace analyses (iteration_runs) are leased like simulation runs: the
-- worker that claims one renews lease_until while it analyses (lease of
-- PERFCAST_JOB_LEASE), another claims it once the lease is over (at most 3
-- attempts, then failed naming the lease), and only the holder (worker,
-- attempts) records the outcome. Runs claimed before this migration keep
-- the old rule: taken again 10 minutes after they started.
ALTER TABLE iteration_runs ADD COLUMN worker text, ADD COLUMN lease_until timestamptz;

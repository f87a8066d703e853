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

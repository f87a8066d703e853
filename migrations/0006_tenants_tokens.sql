-- 0006_tenants_tokens.sql — tenants and their API tokens. Every experiment
-- belongs to one tenant (those created before this migration to the tenant
-- 'default', id 1), and experiment names are unique per tenant. A token is
-- stored only as the SHA-256 of its secret, with one scope (read < write <
-- admin, each including the ones before), an optional expiry, and
-- revoked_at once revoked: a revoked token's row stays, so that its id in
-- the audit log keeps meaning something.
CREATE TABLE tenants (
    id          bigserial PRIMARY KEY,
    name        text NOT NULL UNIQUE,
    created_at  timestamptz NOT NULL DEFAULT now()
);
INSERT INTO tenants (id, name) VALUES (1, 'default');
SELECT setval('tenants_id_seq', 1);

CREATE TABLE tokens (
    id             bigserial PRIMARY KEY,
    tenant_id      bigint NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    secret_sha256  bytea NOT NULL CHECK (length(secret_sha256) = 32),
    scope          text NOT NULL CHECK (scope IN ('read', 'write', 'admin')),
    created_at     timestamptz NOT NULL DEFAULT now(),
    expires_at     timestamptz,
    revoked_at     timestamptz
);
CREATE INDEX tokens_tenant ON tokens (tenant_id);

ALTER TABLE experiments ADD COLUMN tenant_id bigint NOT NULL DEFAULT 1 REFERENCES tenants(id);
ALTER TABLE experiments ALTER COLUMN tenant_id DROP DEFAULT;
ALTER TABLE experiments DROP CONSTRAINT experiments_name_key;
ALTER TABLE experiments ADD CONSTRAINT experiments_tenant_name UNIQUE (tenant_id, name);

-- 0015_devices.sql — GPU devices a tenant adds to the built-in catalog
-- (execgraph/xg_device.h: V100, A100, H100) for the efficiency figures and
-- roofline times of the per-iteration analysis. doc is the device as the API
-- shows it: {"name","peak_flops":{"fp64","fp32","tf32","fp16"} (FLOP/s),
-- "dram_bandwidth" (bytes/s)}, validated before it is stored.
CREATE TABLE devices (
    id          bigserial PRIMARY KEY,
    tenant_id   bigint NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    name        text NOT NULL CHECK (length(name) BETWEEN 1 AND 63),
    doc         jsonb NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    UNIQUE (tenant_id, name)
);

-- The per-iteration analyses of large uploaded Kineto traces run by the job
-- workers (api/iteration_http.c): what was asked (the request body and
-- ?device=), then the answer document (result) or the problem the analysis
-- met (error: {"status","field"?,"detail"}). A run left running by a worker
-- that died is claimed again after 10 minutes, 3 attempts at most.
CREATE TABLE iteration_runs (
    id            bigserial PRIMARY KEY,
    tenant_id     bigint NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    experiment_id bigint REFERENCES experiments(id) ON DELETE CASCADE,  -- NULL: overhead-set
    profile_id    bigint NOT NULL,  -- iteration-model: the first of its profiles
    kind          text NOT NULL
                  CHECK (kind IN ('iteration', 'breakdown', 'iteration-model', 'overhead-set')),
    request       jsonb NOT NULL,
    state         text NOT NULL DEFAULT 'queued'
                  CHECK (state IN ('queued', 'running', 'done', 'failed')),
    attempts      integer NOT NULL DEFAULT 0,
    result        text,
    error         jsonb,
    created_at    timestamptz NOT NULL DEFAULT now(),
    started_at    timestamptz,
    finished_at   timestamptz
);
CREATE INDEX iteration_runs_claimable ON iteration_runs (id) WHERE state IN ('queued', 'running');
CREATE INDEX iteration_runs_experiment ON iteration_runs (experiment_id, id);

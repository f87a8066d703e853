-- 0010_simulations.sql — the asynchronous-SGD simulator's own experiment
-- kind (simulate/, seed 002). A simulation experiment belongs to one tenant
-- like an experiment does (names unique per tenant); its profiles are step
-- graphs of one worker (uploaded as perfcast step-graph JSON or converted
-- from a TensorFlow timeline or Kineto trace: the upload's bytes are kept,
-- and the normalized step graph as perfcast step-graph JSON text); its runs
-- are simulation requests with their answer. A run answered in the request
-- is stored done; a larger one is queued and a worker thread runs it.
CREATE TABLE sim_experiments (
    id          bigserial PRIMARY KEY,
    tenant_id   bigint NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    name        text NOT NULL,
    spec        jsonb NOT NULL,                 -- batch_size, overhead (alpha, beta)
    created_at  timestamptz NOT NULL DEFAULT now(),
    UNIQUE (tenant_id, name)
);

CREATE TABLE sim_profiles (
    id                 bigserial PRIMARY KEY,
    sim_experiment_id  bigint NOT NULL REFERENCES sim_experiments(id) ON DELETE CASCADE,
    source             text NOT NULL CHECK (source IN ('stepgraph', 'tensorflow', 'kineto')),
    sha256             bytea NOT NULL CHECK (length(sha256) = 32),
    raw                bytea NOT NULL,
    graph              text NOT NULL,           -- normalized step graph (perfcast JSON)
    steps              integer NOT NULL CHECK (steps > 0),
    ops                integer NOT NULL CHECK (ops > 0),
    servers            integer NOT NULL CHECK (servers > 0),
    created_at         timestamptz NOT NULL DEFAULT now(),
    UNIQUE (sim_experiment_id, sha256)
);

CREATE TABLE sim_runs (
    id                 bigserial PRIMARY KEY,
    sim_experiment_id  bigint NOT NULL REFERENCES sim_experiments(id) ON DELETE CASCADE,
    profile_id         bigint NOT NULL REFERENCES sim_profiles(id) ON DELETE CASCADE,
    request            jsonb NOT NULL,
    state              text NOT NULL CHECK (state IN ('queued', 'running', 'done', 'failed')),
    result             text,                    -- the answer document (JSON text) once done
    error              text,
    created_at         timestamptz NOT NULL DEFAULT now(),
    started_at         timestamptz,
    finished_at        timestamptz
);
CREATE INDEX sim_runs_experiment ON sim_runs (sim_experiment_id, id);
CREATE INDEX sim_runs_queued ON sim_runs (id) WHERE state = 'queued';

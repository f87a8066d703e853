-- 0025_search_runs.sql — configuration searches and advice too large to
-- answer on an HTTP thread (POST .../configurations and .../advice over more
-- candidates than they answer at once, or with ?job=always), run by the job
-- workers (api/search_runs.c): what was asked (the query's factor levels and
-- the body), then the answer document (result) or the problem the search met
-- (error: the problem document). The worker that claims a run holds it until
-- lease_until and renews it while it runs; a run whose lease expired (its
-- worker died) is claimed again, 3 attempts at most.
CREATE TABLE search_runs (
    id            bigserial PRIMARY KEY,
    tenant_id     bigint NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    experiment_id bigint NOT NULL REFERENCES experiments(id) ON DELETE CASCADE,
    kind          text NOT NULL CHECK (kind IN ('configurations', 'advice')),
    request       jsonb NOT NULL,
    state         text NOT NULL DEFAULT 'queued'
                  CHECK (state IN ('queued', 'running', 'done', 'failed')),
    attempts      integer NOT NULL DEFAULT 0,
    worker        text,
    lease_until   timestamptz,
    result        text,
    error         jsonb,
    created_at    timestamptz NOT NULL DEFAULT now(),
    started_at    timestamptz,
    finished_at   timestamptz
);
CREATE INDEX search_runs_claimable ON search_runs (id) WHERE state IN ('queued', 'running');
CREATE INDEX search_runs_experiment ON search_runs (experiment_id, id);

-- 0009_overhead_sets.sql — shared overhead sets (paper 001 §III-C): the host
-- overheads T1–T5 measured on one or many Kineto traces, stored under a
-- platform name per tenant so that predictions of other experiments on the
-- same platform can use them. doc is the set as the API shows it (profiler
-- overheads subtracted, and per (op, type) and per type: mean, median, std,
-- count, outliers dropped).
CREATE TABLE overhead_sets (
    id          bigserial PRIMARY KEY,
    tenant_id   bigint NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    name        text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    traces      integer NOT NULL CHECK (traces >= 1),
    doc         jsonb NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    UNIQUE (tenant_id, name)
);

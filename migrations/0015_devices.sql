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

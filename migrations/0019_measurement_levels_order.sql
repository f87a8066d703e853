-- 0019_measurement_levels_order.sql — measurements of one coordinate that
-- differ only in their factor levels (an experiment with categorical
-- factors) come back in a fixed order: statistics and sensitivity page
-- through them, and a page must not depend on how the rows lie on disk.
-- The index of 0018 gains the levels as its last column, so the read stays
-- an index scan in this order.
DROP INDEX measurements_ordered;
CREATE INDEX measurements_ordered
    ON measurements (model_set_id, level DESC, name, metric, phase, point, levels);

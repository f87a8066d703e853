-- 0018_statistics_index.sql — the measurements of a model set indexed in the
-- order every reader asks for them (statistics, sensitivity, efficiency and
-- the model cache: store/sweeps.c, store/models.c; level DESC, name, metric,
-- phase, point), so that reading 10,000 coordinates is an index scan rather
-- than a sort of float8 arrays (EXPLAIN ANALYZE, 10,000 rows of one set:
-- Sort node 22-73 ms, the index scan in this order 4-27 ms). It replaces
-- measurements_set (model_set_id, level, name, metric), its prefix: with
-- both, the planner took the shorter one and sorted.
DROP INDEX measurements_set;
CREATE INDEX measurements_ordered
    ON measurements (model_set_id, level DESC, name, metric, phase, point);

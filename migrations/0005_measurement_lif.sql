-- 0005_measurement_lif.sql — each measurement keeps its load-imbalance factor
-- per repetition (max over ranks / mean over ranks of the ranks' values in
-- that repetition, paper 004 Eq. 8), in the order of `repetitions`. The
-- per-rank values (`rank_values`) are medians over repetitions, from which
-- the spread of the factor over repetitions cannot be recovered. NULL in
-- model sets written before this column existed.
ALTER TABLE measurements ADD COLUMN lif_reps double precision[];

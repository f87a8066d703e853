-- 0011_factor_levels.sql — categorical factors: every profile names its
-- levels (one per factor the experiment declares, in the declared order) and
-- measurements and models are kept per level combination. Experiments
-- without factors keep '{}' everywhere.
ALTER TABLE profiles ADD COLUMN levels text[] NOT NULL DEFAULT '{}';
ALTER TABLE measurements ADD COLUMN levels text[] NOT NULL DEFAULT '{}';
ALTER TABLE models ADD COLUMN levels text[] NOT NULL DEFAULT '{}';
ALTER TABLE models DROP CONSTRAINT models_pkey;
ALTER TABLE models ADD PRIMARY KEY (model_set_id, levels, level, name, metric, phase);

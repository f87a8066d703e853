-- 0002_model_phases.sql — callpath models are kept apart by phase: the
-- per-epoch value of the training and validation steps ('epoch') and the
-- work between steps ('between'); application models are all 'epoch'.
ALTER TABLE models ADD COLUMN phase text NOT NULL DEFAULT 'epoch'
    CHECK (phase IN ('epoch', 'between'));
ALTER TABLE models DROP CONSTRAINT models_pkey;
ALTER TABLE models ADD PRIMARY KEY (model_set_id, level, name, metric, phase);
CREATE INDEX models_growth ON models (model_set_id, metric, growth_poly DESC, growth_log DESC, name);

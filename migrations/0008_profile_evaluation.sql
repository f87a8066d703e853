-- 0008_profile_evaluation.sql — uploads kept for evaluation only (Extra-Deep
-- §4: the points P+ that measure a model's predictive power): a refit does
-- not fit them, it compares the models with them.
ALTER TABLE profiles ADD COLUMN evaluation boolean NOT NULL DEFAULT false;

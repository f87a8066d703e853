-- 0013_job_modeler.sql — a refit can ask for a modeler other than its
-- experiment's ('extrap': Extra-P's, 'robust': the noise-resilient one).
-- NULL: the experiment's, which is the "modeler" of its spec; experiments
-- created before there was a choice have none there and keep 'extrap'.
ALTER TABLE jobs ADD COLUMN modeler text CHECK (modeler IN ('extrap', 'robust'));

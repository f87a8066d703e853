-- 0020_job_progress.sql — what a running job's attempt is doing ("fitting
-- callpath models", ...), written by its worker before each step: when the
-- worker stops without saying why (its lease expires), the job's error names
-- the step it stopped in.
ALTER TABLE jobs ADD COLUMN progress text;

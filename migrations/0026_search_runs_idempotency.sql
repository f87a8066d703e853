-- 0026_search_runs_idempotency.sql — a queued configuration search or advice
-- (search_runs, 0025) names itself in the row of the Idempotency-Key its
-- request holds, in the transaction that queues it, as the other work a keyed
-- request creates does (0022): a retry after a crash between the commit and
-- the kept answer is answered 303 with the run's location instead of queueing
-- the search again.
CREATE TRIGGER search_runs_idempotency AFTER INSERT ON search_runs FOR EACH ROW
    EXECUTE FUNCTION idempotency_note_created('/v1/experiments/%s/searches/%s', 'experiment_id', 'id');

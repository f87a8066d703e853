-- 0022_idempotency_created.sql — closes the window between a request's
-- commit and the keeping of its answer (api/idempotency.c): the work a
-- request with an Idempotency-Key creates names itself in the key's row in
-- the same transaction that creates it. The server sets the session
-- variable perfcast.idempotency_key to '<tenant>:<key>' on the connections
-- a request holding its key uses (store/db.c); a trigger on each table whose
-- rows are what such a request creates writes the new row's location into
-- the key's row, once. A key whose first request died after its commit is
-- then never run again: its retry is answered with what was created.
ALTER TABLE idempotency_keys ADD COLUMN created text;

-- TG_ARGV: a format of the location with one %s per further argument, each
-- the name of a column of the new row.
CREATE FUNCTION idempotency_note_created() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    tag  text := current_setting('perfcast.idempotency_key', true);
    sep  integer;
    a    text;
    b    text;
BEGIN
    IF tag IS NULL OR tag = '' THEN
        RETURN NULL;
    END IF;
    sep := position(':' IN tag);
    IF sep < 2 THEN
        RETURN NULL;
    END IF;
    EXECUTE format('SELECT ($1).%I::text', TG_ARGV[1]) USING NEW INTO a;
    IF TG_NARGS > 2 THEN
        EXECUTE format('SELECT ($1).%I::text', TG_ARGV[2]) USING NEW INTO b;
    END IF;
    UPDATE idempotency_keys SET created = format(TG_ARGV[0], a, b)
     WHERE tenant_id = substr(tag, 1, sep - 1)::bigint AND key = substr(tag, sep + 1)
       AND state = 'pending' AND created IS NULL;
    RETURN NULL;
END
$$;

CREATE TRIGGER experiments_idempotency AFTER INSERT ON experiments FOR EACH ROW
    EXECUTE FUNCTION idempotency_note_created('/v1/experiments/%s', 'id');
CREATE TRIGGER jobs_idempotency AFTER INSERT ON jobs FOR EACH ROW
    EXECUTE FUNCTION idempotency_note_created('/v1/jobs/%s', 'id');
CREATE TRIGGER sim_experiments_idempotency AFTER INSERT ON sim_experiments FOR EACH ROW
    EXECUTE FUNCTION idempotency_note_created('/v1/simulations/%s', 'id');
CREATE TRIGGER sim_profiles_idempotency AFTER INSERT ON sim_profiles FOR EACH ROW
    EXECUTE FUNCTION idempotency_note_created('/v1/simulations/%s', 'sim_experiment_id');
CREATE TRIGGER sim_runs_idempotency AFTER INSERT ON sim_runs FOR EACH ROW
    EXECUTE FUNCTION idempotency_note_created('/v1/simulations/%s/runs/%s', 'sim_experiment_id', 'id');
CREATE TRIGGER iteration_runs_idempotency AFTER INSERT ON iteration_runs FOR EACH ROW
    EXECUTE FUNCTION idempotency_note_created('/v1/analyses/%s', 'id');
CREATE TRIGGER overhead_sets_idempotency AFTER INSERT ON overhead_sets FOR EACH ROW
    EXECUTE FUNCTION idempotency_note_created('/v1/overhead-sets/%s', 'id');
CREATE TRIGGER devices_idempotency AFTER INSERT ON devices FOR EACH ROW
    EXECUTE FUNCTION idempotency_note_created('/v1/devices', 'id');

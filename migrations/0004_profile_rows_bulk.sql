-- 0004_profile_rows_bulk.sql — profile_rows without foreign keys, so that an
-- upload's rows go in at bulk speed. Each row's two foreign-key checks cost
-- about four times the insert itself (16,000 rows of one upload: 130 ms with
-- them, 20 ms without). The checks guarded nothing the upload transaction
-- does not already guarantee: profile and callpath ids come from rows
-- written or read in the same transaction, with the experiment locked
-- against deletion. What the keys also did, deleting a profile's rows with
-- it, is now one statement per DELETE on profiles (including the DELETE an
-- experiment's deletion cascades to); callpaths go only with their
-- experiment, and so with its profiles.
ALTER TABLE profile_rows DROP CONSTRAINT profile_rows_profile_id_fkey;
ALTER TABLE profile_rows DROP CONSTRAINT profile_rows_callpath_id_fkey;

CREATE FUNCTION profile_rows_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM profile_rows r USING gone g WHERE r.profile_id = g.id;
    RETURN NULL;
END
$$;

CREATE TRIGGER profiles_delete_rows AFTER DELETE ON profiles
    REFERENCING OLD TABLE AS gone
    FOR EACH STATEMENT EXECUTE FUNCTION profile_rows_delete();

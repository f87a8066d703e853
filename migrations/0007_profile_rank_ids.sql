-- The rank ids each profile holds, so that an upload whose coordinate,
-- repetition and ranks are already stored with other bytes is found without
-- reading profile_rows (store/profiles.c answers it 409, or replaces the
-- stored profile when asked). Filled for the profiles stored before.
ALTER TABLE profiles ADD COLUMN rank_ids integer[];
UPDATE profiles p SET rank_ids = (
    SELECT coalesce(array_agg(DISTINCT r.rank ORDER BY r.rank), '{}')
    FROM profile_rows r WHERE r.profile_id = p.id);
CREATE INDEX profiles_coordinate ON profiles (experiment_id, repetition);

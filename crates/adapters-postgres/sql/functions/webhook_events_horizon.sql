-- The live definition of webhook_events_horizon(): the one place it is written (see ../README.md).
-- The feed's horizon: the highest event id at or below which every event is decided (committed
-- and visible to a snapshot taken after this returns, or rolled back). The order of the two reads
-- matters: the last id handed out first, the floors of this database's writers second
-- (`docs/webhooks.md`, "The events feed", says why this is correct).
CREATE OR REPLACE FUNCTION webhook_events_horizon() RETURNS bigint
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    handed_out bigint;
    lowest_floor bigint;
BEGIN
    handed_out := coalesce(pg_sequence_last_value('webhook_events_id_seq'), 0);
    SELECT min(((l.classid::bigint << 32) | l.objid::bigint) & ((1::bigint << 40) - 1))
      INTO lowest_floor
      FROM pg_locks l
     WHERE l.locktype = 'advisory'
       AND l.objsubid = 1
       AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
       AND (l.classid::bigint >> 8) = x'575757'::bigint;
    RETURN least(handed_out, lowest_floor);
END $$;

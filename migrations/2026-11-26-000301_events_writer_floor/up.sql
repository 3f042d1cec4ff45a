-- The events feed's horizon that only event writers can hold back (issue 28, finding 8;
-- `docs/webhooks.md`, "Events feed").
--
-- Before, the feed ordered events by (writing transaction id, id) and showed only events of
-- transactions older than every transaction running anywhere on the server (the snapshot's xmin),
-- so an idle transaction of any database held every feed back.
--
-- Now an event's place is its id, and each transaction that writes events says, before it takes
-- its first event id, the lowest id it may take: the last event id handed out so far (every id it
-- takes is higher). It says so with a shared transaction-level advisory lock whose key carries
-- that floor, held until it commits or rolls back. The feed's horizon is the last event id handed
-- out, read BEFORE the writers' floors, capped by the lowest floor: every id at or below it was
-- taken by a transaction that has ended (so a new snapshot sees it, or it was rolled back), and
-- every id taken later is above it. Only transactions that write events appear in the floors.

-- Rows from before keep their order and come first: new rows carry this position, above every
-- transaction id a feed position was ever made of, and are ordered by id among themselves.
ALTER TABLE webhook_events ALTER COLUMN txid SET DEFAULT 4611686018427387904;

-- The proof needs the sequence's value to be the last id handed out by anyone: no session may hold
-- ids in advance (one id per call, the default, said out loud).
ALTER TABLE webhook_events ALTER COLUMN id SET CACHE 1;

-- The advisory lock key of a floor: a 24-bit tag in the high bits ('WWW'), the floor in the low
-- 40 bits (a trillion events), so other advisory locks of wms are not mistaken for floors.
CREATE FUNCTION webhook_events_floor_key(floor bigint) RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$ SELECT (x'575757'::bigint << 40) | floor $$;

-- Before an INSERT statement takes event ids: announce this transaction's floor, once per
-- transaction (the transaction-local setting goes with the lock when a savepoint rolls back).
CREATE FUNCTION webhook_events_announce_floor() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('wms.events_floor_held', true) IS DISTINCT FROM 'on' THEN
        PERFORM pg_advisory_xact_lock_shared(
            webhook_events_floor_key(coalesce(pg_sequence_last_value('webhook_events_id_seq'), 0)));
        PERFORM set_config('wms.events_floor_held', 'on', true);
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER webhook_events_announce_floor BEFORE INSERT ON webhook_events
    FOR EACH STATEMENT EXECUTE FUNCTION webhook_events_announce_floor();

-- The highest event id at or below which every event is decided (committed and visible to a
-- snapshot taken after this returns, or rolled back). The order of the two reads matters: the
-- last id handed out first, the floors of this database's writers second.
CREATE FUNCTION webhook_events_horizon() RETURNS bigint
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

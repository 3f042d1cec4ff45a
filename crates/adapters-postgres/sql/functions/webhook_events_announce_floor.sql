-- The live definition of webhook_events_announce_floor(): the one place it is written (see ../README.md).
-- Statement-level BEFORE INSERT trigger of webhook_events: before a statement takes event ids,
-- announce this transaction's floor (the last event id handed out so far: every id it takes is
-- higher) with a shared transaction-level advisory lock, once per transaction. The
-- transaction-local setting goes with the lock when a savepoint rolls back.
CREATE OR REPLACE FUNCTION webhook_events_announce_floor() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('wms.events_floor_held', true) IS DISTINCT FROM 'on' THEN
        PERFORM pg_advisory_xact_lock_shared(
            webhook_events_floor_key(coalesce(pg_sequence_last_value('webhook_events_id_seq'), 0)));
        PERFORM set_config('wms.events_floor_held', 'on', true);
    END IF;
    RETURN NULL;
END $$;

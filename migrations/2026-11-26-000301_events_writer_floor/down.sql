DROP FUNCTION webhook_events_horizon();
DROP TRIGGER webhook_events_announce_floor ON webhook_events;
DROP FUNCTION webhook_events_announce_floor();
DROP FUNCTION webhook_events_floor_key(bigint);
ALTER TABLE webhook_events ALTER COLUMN txid SET DEFAULT (pg_current_xact_id()::text::bigint);

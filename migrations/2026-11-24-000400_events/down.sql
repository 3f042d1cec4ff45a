DROP INDEX webhook_events_workspace_time_idx;
DROP INDEX webhook_events_feed_type_idx;
DROP INDEX webhook_events_feed_idx;
ALTER TABLE webhook_events DROP COLUMN sample;
ALTER TABLE webhook_events DROP COLUMN txid;
-- Events no destination received are not the outbox's before this migration.
DELETE FROM webhook_events e WHERE NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id);

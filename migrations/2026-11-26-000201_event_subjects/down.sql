DROP INDEX IF EXISTS webhook_events_thread_idx;
DROP INDEX IF EXISTS webhook_events_contact_idx;
ALTER TABLE webhook_events DROP COLUMN IF EXISTS thread_id, DROP COLUMN IF EXISTS contact_id;

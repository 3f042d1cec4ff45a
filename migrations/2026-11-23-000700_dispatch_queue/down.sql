CREATE INDEX messages_queued_idx ON messages (id) WHERE status = 'queued' AND direction = 'outbound';
DROP INDEX messages_queued_channel_idx;

-- The dispatcher's queue per channel (issue 21). The claim starts from the channels that can
-- send (active, with credentials, not paused) and takes each one's oldest queued messages from
-- this index, so queued messages of a channel that cannot send (no credentials yet, disconnected,
-- paused) are never read again and again by every poll, however many there are.
CREATE INDEX messages_queued_channel_idx ON messages (channel_id, id) WHERE status = 'queued' AND direction = 'outbound';
DROP INDEX messages_queued_idx;

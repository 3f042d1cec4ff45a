-- Events as a contract (issue 16): every event is kept for the workspace's feed (GET /v1/events)
-- and for replays, whether or not a destination subscribes to it when it happens. The rows are
-- the outbox's own (`webhook_events`), written in the transaction of the change, so the feed id
-- is the `webhook-id` of the event's deliveries.

-- The feed's order. Identity ids are handed out before commit, so a reader paging by id could
-- pass an id whose transaction commits later and never see that event. The writing transaction's
-- id (`pg_current_xact_id`) is what makes it safe: the feed shows only events of transactions
-- older than every transaction still running (`pg_snapshot_xmin`), so once a position is passed,
-- nothing can appear before it. Existing rows are all committed: position 0, then their id.
ALTER TABLE webhook_events ADD COLUMN txid bigint NOT NULL DEFAULT 0;
ALTER TABLE webhook_events ALTER COLUMN txid SET DEFAULT (pg_current_xact_id()::text::bigint);

-- Samples sent by `POST /webhooks/:id/test` (webhook.test, or a typed sample) are no change of
-- the workspace: they are never in the feed and never replayed.
ALTER TABLE webhook_events ADD COLUMN sample boolean NOT NULL DEFAULT false;
UPDATE webhook_events SET sample = true WHERE event_type = 'webhook.test';

-- Keyset pages of the feed, all types or one type: a deep page costs what the first does.
CREATE INDEX webhook_events_feed_idx ON webhook_events (workspace_id, txid, id) WHERE NOT sample;
CREATE INDEX webhook_events_feed_type_idx ON webhook_events (workspace_id, event_type, txid, id) WHERE NOT sample;
-- Replay windows and the feed's `since`.
CREATE INDEX webhook_events_workspace_time_idx ON webhook_events (workspace_id, created_at) WHERE NOT sample;

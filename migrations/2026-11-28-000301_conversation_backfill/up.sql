-- The threads whose messages were stored before the conversation reports recorded figures
-- (docs/architecture.md, "Reports"): each is replayed once through the same decision the live
-- path takes (`adapters_postgres::reports::backfill`, run by `wms serve` and after `wms seed`),
-- then its row goes. `upto_message_id`: the thread's last message when it was noted; later
-- messages, and status changes after `noted_at`, are recorded live and never replayed.
CREATE TABLE conversation_backfill (
    thread_id BIGINT PRIMARY KEY REFERENCES threads (id) ON DELETE CASCADE,
    workspace_id BIGINT NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    upto_message_id BIGINT NOT NULL,
    noted_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX conversation_backfill_workspace ON conversation_backfill (workspace_id, thread_id);

INSERT INTO conversation_backfill (thread_id, workspace_id, upto_message_id)
SELECT thread_id, workspace_id, max(id) FROM messages GROUP BY thread_id, workspace_id;

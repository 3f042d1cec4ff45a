-- The customer-service window of a thread: the latest platform timestamp of the contact's
-- inbound messages on it (a late callback with an older timestamp moves nothing).
ALTER TABLE threads ADD COLUMN latest_inbound_at timestamptz;

-- Inbound messages are stored at their platform time, so existing threads keep their window.
UPDATE threads t SET latest_inbound_at = m.latest
FROM (
    SELECT workspace_id, thread_id, max(created_at) AS latest
    FROM messages WHERE direction = 'inbound'
    GROUP BY workspace_id, thread_id
) m
WHERE t.workspace_id = m.workspace_id AND t.id = m.thread_id;

-- The Meta message tag an outbound message is sent with (`HUMAN_AGENT` on Messenger and
-- Instagram, past the 24-hour window).
ALTER TABLE messages ADD COLUMN platform_tag text;

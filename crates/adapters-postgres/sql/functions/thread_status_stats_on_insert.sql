-- The live definition of thread_status_stats_on_insert(): the one place it is written (see ../README.md).
CREATE OR REPLACE FUNCTION thread_status_stats_on_insert() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO thread_status_stats AS s (workspace_id, status, slot, threads, unread_messages)
    SELECT workspace_id, status, (id % 8)::smallint, count(*), sum(unread_count)
    FROM new_rows
    GROUP BY 1, 2, 3
    ORDER BY 1, 2, 3
    ON CONFLICT (workspace_id, status, slot) DO UPDATE
        SET threads = s.threads + excluded.threads, unread_messages = s.unread_messages + excluded.unread_messages;
    RETURN NULL;
END $$;

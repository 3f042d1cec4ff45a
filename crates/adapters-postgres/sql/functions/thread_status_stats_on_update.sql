-- The live definition of thread_status_stats_on_update(): the one place it is written (see ../README.md).
CREATE OR REPLACE FUNCTION thread_status_stats_on_update() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO thread_status_stats AS s (workspace_id, status, slot, threads, unread_messages)
    SELECT workspace_id, status, (id % 8)::smallint, sum(sign), sum(sign * unread_count)
    FROM (SELECT id, workspace_id, status, unread_count, 1 AS sign FROM new_rows
          UNION ALL
          SELECT id, workspace_id, status, unread_count, -1 FROM old_rows) d
    GROUP BY 1, 2, 3
    HAVING sum(sign) <> 0 OR sum(sign * unread_count) <> 0
    ORDER BY 1, 2, 3
    ON CONFLICT (workspace_id, status, slot) DO UPDATE
        SET threads = s.threads + excluded.threads, unread_messages = s.unread_messages + excluded.unread_messages;
    RETURN NULL;
END $$;

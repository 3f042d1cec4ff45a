-- The live definition of thread_status_stats_on_delete(): the one place it is written (see ../README.md).
CREATE OR REPLACE FUNCTION thread_status_stats_on_delete() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE thread_status_stats s
    SET threads = s.threads - o.threads, unread_messages = s.unread_messages - o.unread_messages
    FROM (SELECT workspace_id, status, (id % 8)::smallint AS slot, count(*) AS threads,
                 sum(unread_count) AS unread_messages
          FROM old_rows GROUP BY 1, 2, 3) o
    WHERE s.workspace_id = o.workspace_id AND s.status = o.status AND s.slot = o.slot;
    RETURN NULL;
END $$;

-- The live definition of message_daily_stats_on_insert(): the one place it is written (see ../README.md).
-- Applies the rows of one statement. The transition tables hold every row the statement touched,
-- so a bulk insert of a million messages costs one aggregate, not a million upserts. Keys are
-- written in order so that concurrent transactions lock rollup rows in the same order.
CREATE OR REPLACE FUNCTION message_daily_stats_on_insert() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO message_daily_stats AS s (workspace_id, channel_id, day, slot, sent, delivered, read, failed)
    SELECT n.workspace_id, n.channel_id, (n.created_at AT TIME ZONE w.time_zone)::date, (n.id % 8)::smallint,
           count(*) FILTER (WHERE wms_message_reached(n.status, 'sent')),
           count(*) FILTER (WHERE wms_message_reached(n.status, 'delivered')),
           count(*) FILTER (WHERE wms_message_reached(n.status, 'read')),
           count(*) FILTER (WHERE n.status = 'failed')
    FROM new_rows n JOIN workspaces w ON w.id = n.workspace_id
    WHERE n.direction = 'outbound' AND n.status <> 'queued'
    GROUP BY 1, 2, 3, 4
    ORDER BY 1, 2, 3, 4
    ON CONFLICT (workspace_id, channel_id, day, slot) DO UPDATE
        SET sent = s.sent + excluded.sent, delivered = s.delivered + excluded.delivered,
            read = s.read + excluded.read, failed = s.failed + excluded.failed;
    RETURN NULL;
END $$;

-- The live definition of message_daily_stats_rebuild(): the one place it is written (see ../README.md).
-- Recomputes one workspace's rollup from its messages (after a time zone change, or by hand).
CREATE OR REPLACE FUNCTION message_daily_stats_rebuild(ws bigint) RETURNS void
LANGUAGE sql AS $$
    DELETE FROM message_daily_stats WHERE workspace_id = ws;
    INSERT INTO message_daily_stats (workspace_id, channel_id, day, slot, sent, delivered, read, failed)
    SELECT m.workspace_id, m.channel_id, (m.created_at AT TIME ZONE w.time_zone)::date, (m.id % 8)::smallint,
           count(*) FILTER (WHERE wms_message_reached(m.status, 'sent')),
           count(*) FILTER (WHERE wms_message_reached(m.status, 'delivered')),
           count(*) FILTER (WHERE wms_message_reached(m.status, 'read')),
           count(*) FILTER (WHERE m.status = 'failed')
    FROM messages m JOIN workspaces w ON w.id = m.workspace_id
    WHERE m.workspace_id = ws AND m.direction = 'outbound' AND m.status <> 'queued'
    GROUP BY 1, 2, 3, 4;
$$;

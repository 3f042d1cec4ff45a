-- The live definition of contact_day_stats_rebuild(): the one place it is written (see ../README.md).
-- Recomputes one workspace's top-countries rollup from its messages (the migration's backfill,
-- after a time zone change, or by hand).
CREATE OR REPLACE FUNCTION contact_day_stats_rebuild(ws bigint) RETURNS void
LANGUAGE sql AS $$
    DELETE FROM contact_day_stats WHERE workspace_id = ws;
    INSERT INTO contact_day_stats (workspace_id, channel_id, day, contact_id,
                                   messages, inbound, sent, delivered, read, failed)
    SELECT m.workspace_id, m.channel_id, (m.created_at AT TIME ZONE w.time_zone)::date, t.contact_id,
           count(*),
           count(*) FILTER (WHERE m.direction = 'inbound'),
           count(*) FILTER (WHERE m.direction = 'outbound' AND wms_message_reached(m.status, 'sent')),
           count(*) FILTER (WHERE m.direction = 'outbound' AND wms_message_reached(m.status, 'delivered')),
           count(*) FILTER (WHERE m.direction = 'outbound' AND wms_message_reached(m.status, 'read')),
           count(*) FILTER (WHERE m.direction = 'outbound' AND m.status = 'failed')
    FROM messages m
    JOIN workspaces w ON w.id = m.workspace_id
    JOIN threads t ON t.id = m.thread_id AND t.workspace_id = m.workspace_id
    WHERE m.workspace_id = ws
    GROUP BY 1, 2, 3, 4;
$$;

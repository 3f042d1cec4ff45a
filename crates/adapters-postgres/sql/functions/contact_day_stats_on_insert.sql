-- The live definition of contact_day_stats_on_insert(): the one place it is written (see ../README.md).
-- Applies the messages of one statement to the top-countries rollup: per channel, calendar day (in
-- the workspace's time zone) and contact, the messages and their figures. The transition table
-- holds every row the statement inserted, so a bulk insert costs one aggregate. Keys are written
-- in order so that concurrent transactions lock rollup rows in the same order.
CREATE OR REPLACE FUNCTION contact_day_stats_on_insert() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO contact_day_stats AS s (workspace_id, channel_id, day, contact_id,
                                        messages, inbound, sent, delivered, read, failed)
    SELECT n.workspace_id, n.channel_id, (n.created_at AT TIME ZONE w.time_zone)::date, t.contact_id,
           count(*),
           count(*) FILTER (WHERE n.direction = 'inbound'),
           count(*) FILTER (WHERE n.direction = 'outbound' AND wms_message_reached(n.status, 'sent')),
           count(*) FILTER (WHERE n.direction = 'outbound' AND wms_message_reached(n.status, 'delivered')),
           count(*) FILTER (WHERE n.direction = 'outbound' AND wms_message_reached(n.status, 'read')),
           count(*) FILTER (WHERE n.direction = 'outbound' AND n.status = 'failed')
    FROM new_rows n
    JOIN workspaces w ON w.id = n.workspace_id
    JOIN threads t ON t.id = n.thread_id AND t.workspace_id = n.workspace_id
    GROUP BY 1, 2, 3, 4
    ORDER BY 1, 2, 3, 4
    ON CONFLICT (workspace_id, channel_id, day, contact_id) DO UPDATE
        SET messages = s.messages + excluded.messages, inbound = s.inbound + excluded.inbound,
            sent = s.sent + excluded.sent, delivered = s.delivered + excluded.delivered,
            read = s.read + excluded.read, failed = s.failed + excluded.failed;
    RETURN NULL;
END $$;

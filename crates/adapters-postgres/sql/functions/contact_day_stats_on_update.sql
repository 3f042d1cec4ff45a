-- The live definition of contact_day_stats_on_update(): the one place it is written (see ../README.md).
-- An update is the new rows' contribution minus the old rows'; rows whose status, direction,
-- channel and day did not change cancel out and write nothing.
CREATE OR REPLACE FUNCTION contact_day_stats_on_update() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO contact_day_stats AS s (workspace_id, channel_id, day, contact_id,
                                        messages, inbound, sent, delivered, read, failed)
    SELECT d.workspace_id, d.channel_id, (d.created_at AT TIME ZONE w.time_zone)::date, t.contact_id,
           sum(d.sign),
           sum(d.sign * (d.direction = 'inbound')::int),
           sum(d.sign * (d.direction = 'outbound' AND wms_message_reached(d.status, 'sent'))::int),
           sum(d.sign * (d.direction = 'outbound' AND wms_message_reached(d.status, 'delivered'))::int),
           sum(d.sign * (d.direction = 'outbound' AND wms_message_reached(d.status, 'read'))::int),
           sum(d.sign * (d.direction = 'outbound' AND d.status = 'failed')::int)
    FROM (SELECT workspace_id, channel_id, thread_id, created_at, direction, status, 1 AS sign FROM new_rows
          UNION ALL
          SELECT workspace_id, channel_id, thread_id, created_at, direction, status, -1 FROM old_rows) d
    JOIN workspaces w ON w.id = d.workspace_id
    JOIN threads t ON t.id = d.thread_id AND t.workspace_id = d.workspace_id
    GROUP BY 1, 2, 3, 4
    HAVING sum(d.sign) <> 0
        OR sum(d.sign * (d.direction = 'inbound')::int) <> 0
        OR sum(d.sign * (d.direction = 'outbound' AND wms_message_reached(d.status, 'sent'))::int) <> 0
        OR sum(d.sign * (d.direction = 'outbound' AND wms_message_reached(d.status, 'delivered'))::int) <> 0
        OR sum(d.sign * (d.direction = 'outbound' AND wms_message_reached(d.status, 'read'))::int) <> 0
        OR sum(d.sign * (d.direction = 'outbound' AND d.status = 'failed')::int) <> 0
    ORDER BY 1, 2, 3, 4
    ON CONFLICT (workspace_id, channel_id, day, contact_id) DO UPDATE
        SET messages = s.messages + excluded.messages, inbound = s.inbound + excluded.inbound,
            sent = s.sent + excluded.sent, delivered = s.delivered + excluded.delivered,
            read = s.read + excluded.read, failed = s.failed + excluded.failed;
    RETURN NULL;
END $$;

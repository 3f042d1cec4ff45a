-- The live definition of message_daily_stats_on_update(): the one place it is written (see ../README.md).
-- An update is the new rows' contribution minus the old rows'; rows whose status, channel, day
-- and direction did not change cancel out and write nothing.
CREATE OR REPLACE FUNCTION message_daily_stats_on_update() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO message_daily_stats AS s (workspace_id, channel_id, day, slot, sent, delivered, read, failed)
    SELECT d.workspace_id, d.channel_id, (d.created_at AT TIME ZONE w.time_zone)::date AS day, (d.id % 8)::smallint,
           sum(d.sign * (wms_message_reached(d.status, 'sent'))::int),
           sum(d.sign * (wms_message_reached(d.status, 'delivered'))::int),
           sum(d.sign * (wms_message_reached(d.status, 'read'))::int),
           sum(d.sign * (d.status = 'failed')::int)
    FROM (SELECT id, workspace_id, channel_id, created_at, status, 1 AS sign FROM new_rows WHERE direction = 'outbound'
          UNION ALL
          SELECT id, workspace_id, channel_id, created_at, status, -1 FROM old_rows WHERE direction = 'outbound') d
    JOIN workspaces w ON w.id = d.workspace_id
    GROUP BY 1, 2, 3, 4
    HAVING sum(d.sign * (wms_message_reached(d.status, 'sent'))::int) <> 0
        OR sum(d.sign * (wms_message_reached(d.status, 'delivered'))::int) <> 0
        OR sum(d.sign * (wms_message_reached(d.status, 'read'))::int) <> 0
        OR sum(d.sign * (d.status = 'failed')::int) <> 0
    ORDER BY 1, 2, 3, 4
    ON CONFLICT (workspace_id, channel_id, day, slot) DO UPDATE
        SET sent = s.sent + excluded.sent, delivered = s.delivered + excluded.delivered,
            read = s.read + excluded.read, failed = s.failed + excluded.failed;
    RETURN NULL;
END $$;

-- The live definition of message_daily_stats_on_delete(): the one place it is written (see ../README.md).
-- Deletes only subtract from existing rows: when a channel or workspace is deleted, its rollup
-- rows are already gone through the cascade and there is nothing to correct.
CREATE OR REPLACE FUNCTION message_daily_stats_on_delete() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE message_daily_stats s
    SET sent = s.sent - o.sent, delivered = s.delivered - o.delivered, read = s.read - o.read, failed = s.failed - o.failed
    FROM (SELECT r.workspace_id, r.channel_id, (r.created_at AT TIME ZONE w.time_zone)::date AS day,
                 (r.id % 8)::smallint AS slot,
                 count(*) FILTER (WHERE wms_message_reached(r.status, 'sent')) AS sent,
                 count(*) FILTER (WHERE wms_message_reached(r.status, 'delivered')) AS delivered,
                 count(*) FILTER (WHERE wms_message_reached(r.status, 'read')) AS read,
                 count(*) FILTER (WHERE r.status = 'failed') AS failed
          FROM old_rows r JOIN workspaces w ON w.id = r.workspace_id
          WHERE r.direction = 'outbound' AND r.status <> 'queued'
          GROUP BY 1, 2, 3, 4) o
    WHERE s.workspace_id = o.workspace_id AND s.channel_id = o.channel_id AND s.day = o.day AND s.slot = o.slot;
    RETURN NULL;
END $$;

-- The live definition of contact_day_stats_on_delete(): the one place it is written (see ../README.md).
-- Deletes only subtract from existing rows: when a channel, contact or workspace is deleted, its
-- rollup rows go through the cascade and there is nothing to correct.
CREATE OR REPLACE FUNCTION contact_day_stats_on_delete() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE contact_day_stats s
    SET messages = s.messages - o.messages, inbound = s.inbound - o.inbound, sent = s.sent - o.sent,
        delivered = s.delivered - o.delivered, read = s.read - o.read, failed = s.failed - o.failed
    FROM (SELECT r.workspace_id, r.channel_id, (r.created_at AT TIME ZONE w.time_zone)::date AS day,
                 t.contact_id,
                 count(*) AS messages,
                 count(*) FILTER (WHERE r.direction = 'inbound') AS inbound,
                 count(*) FILTER (WHERE r.direction = 'outbound' AND wms_message_reached(r.status, 'sent')) AS sent,
                 count(*) FILTER (WHERE r.direction = 'outbound' AND wms_message_reached(r.status, 'delivered')) AS delivered,
                 count(*) FILTER (WHERE r.direction = 'outbound' AND wms_message_reached(r.status, 'read')) AS read,
                 count(*) FILTER (WHERE r.direction = 'outbound' AND r.status = 'failed') AS failed
          FROM old_rows r
          JOIN workspaces w ON w.id = r.workspace_id
          JOIN threads t ON t.id = r.thread_id AND t.workspace_id = r.workspace_id
          GROUP BY 1, 2, 3, 4) o
    WHERE s.workspace_id = o.workspace_id AND s.channel_id = o.channel_id AND s.day = o.day
      AND s.contact_id = o.contact_id;
    RETURN NULL;
END $$;

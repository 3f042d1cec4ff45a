-- The rollups' functions as they were before this migration, each with its own funnel.

-- message_daily_stats_on_insert() as it was before this migration.
-- Applies the rows of one statement. The transition tables hold every row the statement touched,
-- so a bulk insert of a million messages costs one aggregate, not a million upserts. Keys are
-- written in order so that concurrent transactions lock rollup rows in the same order.
CREATE OR REPLACE FUNCTION message_daily_stats_on_insert() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO message_daily_stats AS s (workspace_id, channel_id, day, slot, sent, delivered, read, failed)
    SELECT n.workspace_id, n.channel_id, (n.created_at AT TIME ZONE w.time_zone)::date, (n.id % 8)::smallint,
           count(*) FILTER (WHERE n.status IN ('sent', 'delivered', 'read')),
           count(*) FILTER (WHERE n.status IN ('delivered', 'read')),
           count(*) FILTER (WHERE n.status = 'read'),
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

-- message_daily_stats_on_update() as it was before this migration.
-- An update is the new rows' contribution minus the old rows'; rows whose status, channel, day
-- and direction did not change cancel out and write nothing.
CREATE OR REPLACE FUNCTION message_daily_stats_on_update() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO message_daily_stats AS s (workspace_id, channel_id, day, slot, sent, delivered, read, failed)
    SELECT d.workspace_id, d.channel_id, (d.created_at AT TIME ZONE w.time_zone)::date AS day, (d.id % 8)::smallint,
           sum(d.sign * (d.status IN ('sent', 'delivered', 'read'))::int),
           sum(d.sign * (d.status IN ('delivered', 'read'))::int),
           sum(d.sign * (d.status = 'read')::int),
           sum(d.sign * (d.status = 'failed')::int)
    FROM (SELECT id, workspace_id, channel_id, created_at, status, 1 AS sign FROM new_rows WHERE direction = 'outbound'
          UNION ALL
          SELECT id, workspace_id, channel_id, created_at, status, -1 FROM old_rows WHERE direction = 'outbound') d
    JOIN workspaces w ON w.id = d.workspace_id
    GROUP BY 1, 2, 3, 4
    HAVING sum(d.sign * (d.status IN ('sent', 'delivered', 'read'))::int) <> 0
        OR sum(d.sign * (d.status IN ('delivered', 'read'))::int) <> 0
        OR sum(d.sign * (d.status = 'read')::int) <> 0
        OR sum(d.sign * (d.status = 'failed')::int) <> 0
    ORDER BY 1, 2, 3, 4
    ON CONFLICT (workspace_id, channel_id, day, slot) DO UPDATE
        SET sent = s.sent + excluded.sent, delivered = s.delivered + excluded.delivered,
            read = s.read + excluded.read, failed = s.failed + excluded.failed;
    RETURN NULL;
END $$;

-- message_daily_stats_on_delete() as it was before this migration.
-- Deletes only subtract from existing rows: when a channel or workspace is deleted, its rollup
-- rows are already gone through the cascade and there is nothing to correct.
CREATE OR REPLACE FUNCTION message_daily_stats_on_delete() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE message_daily_stats s
    SET sent = s.sent - o.sent, delivered = s.delivered - o.delivered, read = s.read - o.read, failed = s.failed - o.failed
    FROM (SELECT r.workspace_id, r.channel_id, (r.created_at AT TIME ZONE w.time_zone)::date AS day,
                 (r.id % 8)::smallint AS slot,
                 count(*) FILTER (WHERE r.status IN ('sent', 'delivered', 'read')) AS sent,
                 count(*) FILTER (WHERE r.status IN ('delivered', 'read')) AS delivered,
                 count(*) FILTER (WHERE r.status = 'read') AS read,
                 count(*) FILTER (WHERE r.status = 'failed') AS failed
          FROM old_rows r JOIN workspaces w ON w.id = r.workspace_id
          WHERE r.direction = 'outbound' AND r.status <> 'queued'
          GROUP BY 1, 2, 3, 4) o
    WHERE s.workspace_id = o.workspace_id AND s.channel_id = o.channel_id AND s.day = o.day AND s.slot = o.slot;
    RETURN NULL;
END $$;

-- message_daily_stats_rebuild() as it was before this migration.
-- Recomputes one workspace's rollup from its messages (after a time zone change, or by hand).
CREATE OR REPLACE FUNCTION message_daily_stats_rebuild(ws bigint) RETURNS void
LANGUAGE sql AS $$
    DELETE FROM message_daily_stats WHERE workspace_id = ws;
    INSERT INTO message_daily_stats (workspace_id, channel_id, day, slot, sent, delivered, read, failed)
    SELECT m.workspace_id, m.channel_id, (m.created_at AT TIME ZONE w.time_zone)::date, (m.id % 8)::smallint,
           count(*) FILTER (WHERE m.status IN ('sent', 'delivered', 'read')),
           count(*) FILTER (WHERE m.status IN ('delivered', 'read')),
           count(*) FILTER (WHERE m.status = 'read'),
           count(*) FILTER (WHERE m.status = 'failed')
    FROM messages m JOIN workspaces w ON w.id = m.workspace_id
    WHERE m.workspace_id = ws AND m.direction = 'outbound' AND m.status <> 'queued'
    GROUP BY 1, 2, 3, 4;
$$;

-- contact_day_stats_on_insert() as it was before this migration.
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
           count(*) FILTER (WHERE n.direction = 'outbound' AND n.status IN ('sent', 'delivered', 'read')),
           count(*) FILTER (WHERE n.direction = 'outbound' AND n.status IN ('delivered', 'read')),
           count(*) FILTER (WHERE n.direction = 'outbound' AND n.status = 'read'),
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

-- contact_day_stats_on_update() as it was before this migration.
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
           sum(d.sign * (d.direction = 'outbound' AND d.status IN ('sent', 'delivered', 'read'))::int),
           sum(d.sign * (d.direction = 'outbound' AND d.status IN ('delivered', 'read'))::int),
           sum(d.sign * (d.direction = 'outbound' AND d.status = 'read')::int),
           sum(d.sign * (d.direction = 'outbound' AND d.status = 'failed')::int)
    FROM (SELECT workspace_id, channel_id, thread_id, created_at, direction, status, 1 AS sign FROM new_rows
          UNION ALL
          SELECT workspace_id, channel_id, thread_id, created_at, direction, status, -1 FROM old_rows) d
    JOIN workspaces w ON w.id = d.workspace_id
    JOIN threads t ON t.id = d.thread_id AND t.workspace_id = d.workspace_id
    GROUP BY 1, 2, 3, 4
    HAVING sum(d.sign) <> 0
        OR sum(d.sign * (d.direction = 'inbound')::int) <> 0
        OR sum(d.sign * (d.direction = 'outbound' AND d.status IN ('sent', 'delivered', 'read'))::int) <> 0
        OR sum(d.sign * (d.direction = 'outbound' AND d.status IN ('delivered', 'read'))::int) <> 0
        OR sum(d.sign * (d.direction = 'outbound' AND d.status = 'read')::int) <> 0
        OR sum(d.sign * (d.direction = 'outbound' AND d.status = 'failed')::int) <> 0
    ORDER BY 1, 2, 3, 4
    ON CONFLICT (workspace_id, channel_id, day, contact_id) DO UPDATE
        SET messages = s.messages + excluded.messages, inbound = s.inbound + excluded.inbound,
            sent = s.sent + excluded.sent, delivered = s.delivered + excluded.delivered,
            read = s.read + excluded.read, failed = s.failed + excluded.failed;
    RETURN NULL;
END $$;

-- contact_day_stats_on_delete() as it was before this migration.
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
                 count(*) FILTER (WHERE r.direction = 'outbound' AND r.status IN ('sent', 'delivered', 'read')) AS sent,
                 count(*) FILTER (WHERE r.direction = 'outbound' AND r.status IN ('delivered', 'read')) AS delivered,
                 count(*) FILTER (WHERE r.direction = 'outbound' AND r.status = 'read') AS read,
                 count(*) FILTER (WHERE r.direction = 'outbound' AND r.status = 'failed') AS failed
          FROM old_rows r
          JOIN workspaces w ON w.id = r.workspace_id
          JOIN threads t ON t.id = r.thread_id AND t.workspace_id = r.workspace_id
          GROUP BY 1, 2, 3, 4) o
    WHERE s.workspace_id = o.workspace_id AND s.channel_id = o.channel_id AND s.day = o.day
      AND s.contact_id = o.contact_id;
    RETURN NULL;
END $$;

-- contact_day_stats_rebuild() as it was before this migration.
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
           count(*) FILTER (WHERE m.direction = 'outbound' AND m.status IN ('sent', 'delivered', 'read')),
           count(*) FILTER (WHERE m.direction = 'outbound' AND m.status IN ('delivered', 'read')),
           count(*) FILTER (WHERE m.direction = 'outbound' AND m.status = 'read'),
           count(*) FILTER (WHERE m.direction = 'outbound' AND m.status = 'failed')
    FROM messages m
    JOIN workspaces w ON w.id = m.workspace_id
    JOIN threads t ON t.id = m.thread_id AND t.workspace_id = m.workspace_id
    WHERE m.workspace_id = ws
    GROUP BY 1, 2, 3, 4;
$$;

DROP FUNCTION wms_message_reached(text, text);

-- The top-countries export from a rollup (issue 28, finding 6; `docs/benchmarks.md`,
-- "Top countries"). Grouping every message of the period by its contact's country cost ~0.5 s of
-- database time per export at 200,000 messages. This table has one row per channel, calendar day
-- (in the workspace's time zone, as the export's days) and contact with messages that day: the
-- figures of that contact's messages. The export sums the period's rows and counts the distinct
-- contacts among them, joining `contacts` for the country at read time, so a contact's country
-- change (or erasure) needs no maintenance and the figures stay exact.
--
-- Statement-level triggers on `messages` keep it exact in the same transaction as every insert,
-- status change and delete, whoever writes, like `message_daily_stats`; a time zone change
-- rebuilds the workspace's rows.

CREATE TABLE contact_day_stats (
    workspace_id bigint  NOT NULL,
    channel_id   bigint  NOT NULL,
    day          date    NOT NULL,
    contact_id   bigint  NOT NULL,
    -- Every message of the contact on that channel and day, whatever its direction and status
    -- (a contact counts in the period when this is above zero).
    messages     integer NOT NULL DEFAULT 0,
    inbound      integer NOT NULL DEFAULT 0,
    -- Outbound messages by their current status: sent = sent + delivered + read;
    -- delivered = delivered + read; read; failed.
    sent         integer NOT NULL DEFAULT 0,
    delivered    integer NOT NULL DEFAULT 0,
    read         integer NOT NULL DEFAULT 0,
    failed       integer NOT NULL DEFAULT 0,
    PRIMARY KEY (workspace_id, channel_id, day, contact_id),
    FOREIGN KEY (workspace_id, channel_id) REFERENCES channels (workspace_id, id) ON DELETE CASCADE,
    FOREIGN KEY (contact_id) REFERENCES contacts (id) ON DELETE CASCADE
);
CREATE INDEX contact_day_stats_contact_idx ON contact_day_stats (contact_id);

-- The version of contact_day_stats_on_insert() this migration created (the live one: crates/adapters-postgres/sql/functions/contact_day_stats_on_insert.sql).
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

-- The version of contact_day_stats_on_update() this migration created (the live one: crates/adapters-postgres/sql/functions/contact_day_stats_on_update.sql).
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

-- The version of contact_day_stats_on_delete() this migration created (the live one: crates/adapters-postgres/sql/functions/contact_day_stats_on_delete.sql).
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

CREATE TRIGGER messages_contact_day_stats_insert AFTER INSERT ON messages
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION contact_day_stats_on_insert();
CREATE TRIGGER messages_contact_day_stats_update AFTER UPDATE ON messages
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION contact_day_stats_on_update();
CREATE TRIGGER messages_contact_day_stats_delete AFTER DELETE ON messages
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION contact_day_stats_on_delete();

-- The version of contact_day_stats_rebuild() this migration created (the live one: crates/adapters-postgres/sql/functions/contact_day_stats_rebuild.sql).
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

--! include functions/contact_day_stats_on_time_zone.sql sha256:d8680727c28fd327

CREATE TRIGGER workspaces_contact_day_stats_time_zone AFTER UPDATE OF time_zone ON workspaces
    FOR EACH ROW WHEN (OLD.time_zone IS DISTINCT FROM NEW.time_zone)
    EXECUTE FUNCTION contact_day_stats_on_time_zone();

-- Messages written before this migration.
SELECT contact_day_stats_rebuild(id) FROM workspaces;
ANALYZE contact_day_stats;

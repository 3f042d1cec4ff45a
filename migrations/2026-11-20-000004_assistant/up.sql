-- The assistant's live-data tools (issue 6).
--
-- message_daily_stats: outbound message figures per channel and day, for get_channel_analytics
-- (and the Analytics page). Computing 90 days of a busy workspace from `messages` means
-- aggregating about half a million rows per request; this table has one row per channel and day.
-- Statement-level triggers on `messages` keep it exact in the same transaction as every insert,
-- status change and delete, whoever writes (the API, the status callbacks, the seed), so it can
-- never drift from the messages.

--! include functions/wms_is_time_zone.sql sha256:1bb15ac5c07f4e3f

ALTER TABLE workspaces ADD CONSTRAINT workspaces_time_zone_check CHECK (wms_is_time_zone(time_zone));

CREATE TABLE message_daily_stats (
    workspace_id bigint  NOT NULL,
    channel_id   bigint  NOT NULL,
    -- The calendar day, in the workspace's time zone, on which the message was created.
    day          date    NOT NULL,
    -- message id % 8: concurrent writers of one channel and day (a campaign's status callbacks)
    -- spread over eight rows instead of queueing on one row lock. Readers sum the slots.
    slot         smallint NOT NULL,
    -- Outbound messages by their current status (docs/assistant.md, "Rates"):
    -- sent = sent + delivered + read; delivered = delivered + read; read; failed. Queued: none.
    sent         integer NOT NULL DEFAULT 0,
    delivered    integer NOT NULL DEFAULT 0,
    read         integer NOT NULL DEFAULT 0,
    failed       integer NOT NULL DEFAULT 0,
    PRIMARY KEY (workspace_id, channel_id, day, slot),
    FOREIGN KEY (workspace_id, channel_id) REFERENCES channels (workspace_id, id) ON DELETE CASCADE
);

-- The version of message_daily_stats_on_insert() this migration created (the live one: crates/adapters-postgres/sql/functions/message_daily_stats_on_insert.sql).
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

-- The version of message_daily_stats_on_update() this migration created (the live one: crates/adapters-postgres/sql/functions/message_daily_stats_on_update.sql).
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

-- The version of message_daily_stats_on_delete() this migration created (the live one: crates/adapters-postgres/sql/functions/message_daily_stats_on_delete.sql).
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

CREATE TRIGGER messages_daily_stats_insert AFTER INSERT ON messages
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION message_daily_stats_on_insert();
CREATE TRIGGER messages_daily_stats_update AFTER UPDATE ON messages
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION message_daily_stats_on_update();
CREATE TRIGGER messages_daily_stats_delete AFTER DELETE ON messages
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION message_daily_stats_on_delete();

-- The version of message_daily_stats_rebuild() this migration created (the live one: crates/adapters-postgres/sql/functions/message_daily_stats_rebuild.sql).
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

--! include functions/message_daily_stats_on_time_zone.sql sha256:ef8ca11c82193c6b

CREATE TRIGGER workspaces_time_zone_rebuild AFTER UPDATE OF time_zone ON workspaces
    FOR EACH ROW WHEN (OLD.time_zone IS DISTINCT FROM NEW.time_zone)
    EXECUTE FUNCTION message_daily_stats_on_time_zone();

-- Messages written before this migration.
SELECT message_daily_stats_rebuild(id) FROM workspaces;

-- thread_status_stats: threads and their unread messages per thread status, for
-- get_workspace_overview. Counting 100,000 threads takes 15 ms or more even from an index; this
-- table answers in a few rows. Kept exact by statement-level triggers on `threads`, like
-- message_daily_stats; rows of a status no thread has any more stay, at zero.
CREATE TABLE thread_status_stats (
    workspace_id    bigint   NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    status          text     NOT NULL,
    -- thread id % 8, so that concurrent inbound messages (each changes its thread's unread count)
    -- do not all queue on one row lock. Readers sum the slots.
    slot            smallint NOT NULL,
    threads         bigint   NOT NULL DEFAULT 0,
    unread_messages bigint   NOT NULL DEFAULT 0,
    PRIMARY KEY (workspace_id, status, slot)
);

--! include functions/thread_status_stats_on_insert.sql sha256:a8406843c4e0670f

--! include functions/thread_status_stats_on_update.sql sha256:3d3fa917e55f022f

--! include functions/thread_status_stats_on_delete.sql sha256:e2b8405859729db1

CREATE TRIGGER threads_status_stats_insert AFTER INSERT ON threads
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION thread_status_stats_on_insert();
CREATE TRIGGER threads_status_stats_update AFTER UPDATE ON threads
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION thread_status_stats_on_update();
CREATE TRIGGER threads_status_stats_delete AFTER DELETE ON threads
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION thread_status_stats_on_delete();

-- Threads written before this migration.
INSERT INTO thread_status_stats (workspace_id, status, slot, threads, unread_messages)
SELECT workspace_id, status, (id % 8)::smallint, count(*), sum(unread_count) FROM threads GROUP BY 1, 2, 3;

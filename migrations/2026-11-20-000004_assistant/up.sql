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

--! include functions/message_daily_stats_on_insert.sql sha256:bb99fc481689305d

--! include functions/message_daily_stats_on_update.sql sha256:a618ec56a7d4b303

--! include functions/message_daily_stats_on_delete.sql sha256:52796048c8d78384

CREATE TRIGGER messages_daily_stats_insert AFTER INSERT ON messages
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION message_daily_stats_on_insert();
CREATE TRIGGER messages_daily_stats_update AFTER UPDATE ON messages
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION message_daily_stats_on_update();
CREATE TRIGGER messages_daily_stats_delete AFTER DELETE ON messages
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION message_daily_stats_on_delete();

--! include functions/message_daily_stats_rebuild.sql sha256:f59e94b3e445e790

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

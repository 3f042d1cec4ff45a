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

--! include functions/contact_day_stats_on_insert.sql sha256:5708cc96f715b0bb

--! include functions/contact_day_stats_on_update.sql sha256:07899988ce86e735

--! include functions/contact_day_stats_on_delete.sql sha256:27a396493c5f7a89

CREATE TRIGGER messages_contact_day_stats_insert AFTER INSERT ON messages
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION contact_day_stats_on_insert();
CREATE TRIGGER messages_contact_day_stats_update AFTER UPDATE ON messages
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION contact_day_stats_on_update();
CREATE TRIGGER messages_contact_day_stats_delete AFTER DELETE ON messages
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION contact_day_stats_on_delete();

--! include functions/contact_day_stats_rebuild.sql sha256:e958d1a8761fae67

--! include functions/contact_day_stats_on_time_zone.sql sha256:d8680727c28fd327

CREATE TRIGGER workspaces_contact_day_stats_time_zone AFTER UPDATE OF time_zone ON workspaces
    FOR EACH ROW WHEN (OLD.time_zone IS DISTINCT FROM NEW.time_zone)
    EXECUTE FUNCTION contact_day_stats_on_time_zone();

-- Messages written before this migration.
SELECT contact_day_stats_rebuild(id) FROM workspaces;
ANALYZE contact_day_stats;

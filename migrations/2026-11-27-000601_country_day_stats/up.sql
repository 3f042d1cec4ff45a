-- Top countries in constant time (issue 28, finding 6; `docs/benchmarks.md`, "Top countries").
-- Reading `contact_day_stats` for 90 days sums one row per channel, day and contact with messages
-- (~100,000 rows at 1M messages) and joins the contacts for their country: ~0.5 s on a loaded
-- machine. The export's period always ends today, so a contact counts in it exactly when its
-- latest day with messages (in the selection) is in it; this summary keeps, per scope (a channel,
-- or 0 for all WhatsApp channels), day and country, how many contacts have that day as their
-- latest, and per channel, day and country the messages' figures. The export then sums at most
-- (days × countries × 4) rows per scope. `contact_activity` holds each contact's latest day per
-- scope and the country it is counted under; a country change moves the contact's counts and
-- figures (trigger on `contacts`).
--
-- Kept by statement-level triggers on `contact_day_stats` (itself kept by triggers on `messages`),
-- so every insert, status change, delete, rebuild and time zone change of the messages reaches
-- it in the same transaction. `slot` (contact id modulo 4) spreads concurrent writers of the same
-- day and country over several rows, as `message_daily_stats` does (with 4, not its 8: the export
-- reads every slot, and 8 doubled its time for no measured gain).

CREATE TABLE contact_activity (
    contact_id   bigint NOT NULL,
    -- A channel's id, or 0 for all the workspace's WhatsApp channels together.
    scope_id     bigint NOT NULL,
    workspace_id bigint NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    -- The contact's country as the export shows it (upper case, '' when none), kept current.
    country      text   NOT NULL,
    -- The latest calendar day (workspace time zone) with messages of the contact in the scope.
    last_day     date,
    PRIMARY KEY (contact_id, scope_id)
);
CREATE INDEX contact_activity_workspace_idx ON contact_activity (workspace_id);

CREATE TABLE country_day_stats (
    workspace_id bigint   NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    -- A channel's id, or 0 for all the workspace's WhatsApp channels (contacts only).
    scope_id     bigint   NOT NULL,
    day          date     NOT NULL,
    country      text     NOT NULL,
    slot         smallint NOT NULL,
    -- Contacts (with this country and slot) whose latest day with messages in the scope is `day`.
    contacts     integer  NOT NULL DEFAULT 0,
    -- The figures of the messages of that day, on channel scopes (as in `contact_day_stats`).
    inbound      integer  NOT NULL DEFAULT 0,
    sent         integer  NOT NULL DEFAULT 0,
    delivered    integer  NOT NULL DEFAULT 0,
    read         integer  NOT NULL DEFAULT 0,
    failed       integer  NOT NULL DEFAULT 0,
    PRIMARY KEY (workspace_id, scope_id, day, country, slot)
);

--! include functions/country_day_stats_apply.sql sha256:7d39d2b0b322dab6

--! include functions/country_day_stats_on_insert.sql sha256:d64908e3e5913d14

--! include functions/country_day_stats_on_update.sql sha256:b1ba6f61e17cc7eb

--! include functions/country_day_stats_on_delete.sql sha256:810539bc9cea45ef

--! include functions/country_day_stats_on_country.sql sha256:9128be7ac0dc3309

--! include functions/country_day_stats_pause.sql sha256:8b6f90dc2fcbd2ee

--! include functions/country_day_stats_on_time_zone.sql sha256:04f8d2c2eb6c1ac7

--! include functions/country_day_stats_rebuild.sql sha256:7b607fa046feed4a

CREATE TRIGGER contact_day_stats_country_insert AFTER INSERT ON contact_day_stats
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION country_day_stats_on_insert();
CREATE TRIGGER contact_day_stats_country_update AFTER UPDATE ON contact_day_stats
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION country_day_stats_on_update();
CREATE TRIGGER contact_day_stats_country_delete AFTER DELETE ON contact_day_stats
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION country_day_stats_on_delete();
CREATE TRIGGER contacts_country_day_stats AFTER UPDATE OF country ON contacts
    FOR EACH ROW
    WHEN (coalesce(upper(nullif(btrim(OLD.country), '')), '') IS DISTINCT FROM coalesce(upper(nullif(btrim(NEW.country), '')), ''))
    EXECUTE FUNCTION country_day_stats_on_country();
-- A time zone change: `workspaces_contact_day_stats_time_zone` rebuilds the rollup (its name sorts
-- before this one's), then the summary is rebuilt once; its row triggers pause in between.
CREATE TRIGGER workspaces_country_day_stats_pause BEFORE UPDATE OF time_zone ON workspaces
    FOR EACH ROW WHEN (OLD.time_zone IS DISTINCT FROM NEW.time_zone)
    EXECUTE FUNCTION country_day_stats_pause();
CREATE TRIGGER workspaces_country_day_stats_time_zone AFTER UPDATE OF time_zone ON workspaces
    FOR EACH ROW WHEN (OLD.time_zone IS DISTINCT FROM NEW.time_zone)
    EXECUTE FUNCTION country_day_stats_on_time_zone();

-- Messages written before this migration.
SELECT country_day_stats_rebuild(id) FROM workspaces;
ANALYZE contact_activity;
ANALYZE country_day_stats;

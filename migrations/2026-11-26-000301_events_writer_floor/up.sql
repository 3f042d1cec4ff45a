-- The events feed's horizon that only event writers can hold back (issue 28, finding 8;
-- `docs/webhooks.md`, "Events feed").
--
-- Before, the feed ordered events by (writing transaction id, id) and showed only events of
-- transactions older than every transaction running anywhere on the server (the snapshot's xmin),
-- so an idle transaction of any database held every feed back.
--
-- Now an event's place is its id, and each transaction that writes events says, before it takes
-- its first event id, the lowest id it may take: the last event id handed out so far (every id it
-- takes is higher). It says so with a shared transaction-level advisory lock whose key carries
-- that floor, held until it commits or rolls back. The feed's horizon is the last event id handed
-- out, read BEFORE the writers' floors, capped by the lowest floor: every id at or below it was
-- taken by a transaction that has ended (so a new snapshot sees it, or it was rolled back), and
-- every id taken later is above it. Only transactions that write events appear in the floors.

-- Rows from before keep their order and come first: new rows carry this position, above every
-- transaction id a feed position was ever made of, and are ordered by id among themselves.
ALTER TABLE webhook_events ALTER COLUMN txid SET DEFAULT 4611686018427387904;

-- The proof needs the sequence's value to be the last id handed out by anyone: no session may hold
-- ids in advance (one id per call, the default, said out loud).
ALTER TABLE webhook_events ALTER COLUMN id SET CACHE 1;

--! include functions/webhook_events_floor_key.sql sha256:4043ea4909550114

--! include functions/webhook_events_announce_floor.sql sha256:cda34d5d52fc0aaf

CREATE TRIGGER webhook_events_announce_floor BEFORE INSERT ON webhook_events
    FOR EACH STATEMENT EXECUTE FUNCTION webhook_events_announce_floor();

--! include functions/webhook_events_horizon.sql sha256:f7a6a7b2e53555c9

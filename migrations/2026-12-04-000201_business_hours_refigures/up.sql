-- A change of a workspace's business hours refigures the business seconds of the report facts
-- stored before it in batches, each its own short transaction, instead of all of them in the
-- change's transaction: at a million messages that took over a minute under the hours' exclusive
-- lock, and every send of the workspace waited for it. One row per workspace whose hours changed:
-- its facts with an id up to `up_to` were stored before the latest change, those up to `after`
-- are refigured (done when `after` reaches `up_to`). A newer change starts the row over.
CREATE TABLE business_hours_refigures (
    workspace_id bigint      PRIMARY KEY REFERENCES workspaces (id) ON DELETE CASCADE,
    up_to        bigint      NOT NULL,
    after        bigint      NOT NULL DEFAULT 0,
    changed_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX business_hours_refigures_unfinished ON business_hours_refigures (workspace_id) WHERE after < up_to;

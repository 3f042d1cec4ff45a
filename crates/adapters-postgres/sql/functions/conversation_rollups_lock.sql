-- The live definition of conversation_rollups_lock(): the one place it is written (see ../README.md).
-- Takes a workspace's rollup for a change outside the rollup worker (a label given or taken,
-- facts deleted or refigured) until the transaction ends: `pg_advisory_xact_lock` on the
-- workspace's key. The worker only ever tries for the same key in share mode
-- (conversation_rollups_fold()) and skips the workspace's facts when it cannot have it, so the
-- worker never waits, and such a change waits for the worker's batch in flight instead of
-- locking rollup rows in an order that could deadlock with it.
CREATE OR REPLACE FUNCTION conversation_rollups_lock(workspace_ids bigint[]) RETURNS void
LANGUAGE sql AS $$
    SELECT count(pg_advisory_xact_lock(hashtextextended('conversation-rollups:' || w, 0)))
    FROM (SELECT DISTINCT w FROM unnest(workspace_ids) w ORDER BY w) x
$$;

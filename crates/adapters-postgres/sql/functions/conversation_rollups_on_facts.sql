-- The live definition of conversation_rollups_on_facts(): the one place it is written (see ../README.md).
-- Facts deleted (a thread's cascade) or updated (business seconds refigured when the hours change)
-- keep `conversation_rollups` and `conversation_label_facts` exact in the writer's transaction. A
-- fact still pending is in neither: a deleted one leaves the queue, an updated one is folded later
-- as it is then. The workspace's rollup is taken first (conversation_rollups_lock()): a worker
-- batch in flight is waited for, and once it has committed its facts count as folded, with the
-- values it read (the old ones: this transaction's change was not visible to it); the thread's
-- labels are read after that, so a label given meanwhile is counted by exactly one of the two.
CREATE OR REPLACE FUNCTION conversation_rollups_on_facts() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    pending bigint[];
    changed bigint[];
BEGIN
    IF TG_OP = 'DELETE' THEN
        PERFORM conversation_rollups_lock(ARRAY(SELECT DISTINCT workspace_id FROM old_rows));
        WITH gone AS (
            DELETE FROM conversation_facts_pending p USING old_rows o WHERE p.fact_id = o.id RETURNING p.fact_id)
        SELECT coalesce(array_agg(fact_id), '{}') INTO pending FROM gone;
        PERFORM conversation_rollups_apply(ARRAY(
            SELECT r FROM old_rows f, LATERAL conversation_rollup_rows(
                f.workspace_id, f.kind, f.at, f.seconds, f.business_seconds, f.user_id, f.team_id, f.channel_id,
                ARRAY(SELECT tl.label_id FROM thread_labels tl WHERE tl.thread_id = f.thread_id), true, -1) r
            WHERE f.id <> ALL (pending)));
        DELETE FROM conversation_label_facts lf USING old_rows o JOIN thread_labels tl ON tl.thread_id = o.thread_id
        WHERE lf.label_id = tl.label_id AND lf.fact_id = o.id;
    ELSE
        PERFORM conversation_rollups_lock(ARRAY(SELECT DISTINCT workspace_id FROM old_rows));
        SELECT coalesce(array_agg(fact_id), '{}') INTO pending
        FROM (SELECT p.fact_id FROM conversation_facts_pending p WHERE p.fact_id IN (SELECT id FROM new_rows)
              ORDER BY p.fact_id FOR UPDATE) x;
        -- Only the folded facts that changed (a refiguring leaves most business seconds as they were).
        SELECT coalesce(array_agg(o.id), '{}') INTO changed
        FROM old_rows o JOIN new_rows n USING (id)
        WHERE o.id <> ALL (pending)
          AND (o.workspace_id, o.thread_id, o.channel_id, o.kind, o.at, o.seconds, o.business_seconds, o.user_id,
               o.team_id)
              IS DISTINCT FROM (n.workspace_id, n.thread_id, n.channel_id, n.kind, n.at, n.seconds,
                                n.business_seconds, n.user_id, n.team_id);
        PERFORM conversation_rollups_apply(ARRAY(
            SELECT r FROM (SELECT o.*, -1 AS sign FROM old_rows o
                           UNION ALL SELECT n.*, 1 AS sign FROM new_rows n) f,
                LATERAL conversation_rollup_rows(
                    f.workspace_id, f.kind, f.at, f.seconds, f.business_seconds, f.user_id, f.team_id, f.channel_id,
                    ARRAY(SELECT tl.label_id FROM thread_labels tl WHERE tl.thread_id = f.thread_id), true, f.sign) r
            WHERE f.id = ANY (changed)));
        DELETE FROM conversation_label_facts lf USING old_rows o JOIN thread_labels tl ON tl.thread_id = o.thread_id
        WHERE lf.label_id = tl.label_id AND lf.fact_id = o.id AND o.id = ANY (changed);
        INSERT INTO conversation_label_facts (workspace_id, label_id, fact_id, kind, at, seconds, business_seconds)
        SELECT n.workspace_id, tl.label_id, n.id, n.kind, n.at, n.seconds, n.business_seconds
        FROM new_rows n JOIN thread_labels tl ON tl.thread_id = n.thread_id
        WHERE n.id = ANY (changed) AND (n.seconds IS NOT NULL OR n.business_seconds IS NOT NULL);
    END IF;
    RETURN NULL;
END $$;

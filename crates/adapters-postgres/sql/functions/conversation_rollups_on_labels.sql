-- The live definition of conversation_rollups_on_labels(): the one place it is written (see ../README.md).
-- A thread gaining (or losing) a label moves its folded facts into (out of) the label's figures in
-- `conversation_rollups` and `conversation_label_facts`: a label figure goes to the labels the
-- thread carries now. Its pending facts are folded later with the labels of that time. The
-- workspace's rollup is taken first (conversation_rollups_lock()): a batch of the worker in flight
-- is waited for and the next one skips the workspace until this transaction ends, and a
-- refiguring of business seconds waits for it too, then reads the thread's labels afresh. The
-- thread rows are locked as well: a worker folds a fact only while it holds its thread.
CREATE OR REPLACE FUNCTION conversation_rollups_on_labels() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM conversation_rollups_lock(ARRAY(SELECT DISTINCT workspace_id FROM new_rows));
        PERFORM 1 FROM threads WHERE id IN (SELECT thread_id FROM new_rows) ORDER BY id FOR UPDATE;
        PERFORM conversation_rollups_apply(ARRAY(
            SELECT r FROM new_rows tl JOIN conversation_facts f ON f.thread_id = tl.thread_id,
                LATERAL conversation_rollup_rows(
                    f.workspace_id, f.kind, f.at, f.seconds, f.business_seconds, f.user_id, f.team_id, f.channel_id,
                    ARRAY[tl.label_id], false, 1) r
            WHERE NOT EXISTS (SELECT 1 FROM conversation_facts_pending p WHERE p.fact_id = f.id)));
        INSERT INTO conversation_label_facts (workspace_id, label_id, fact_id, kind, at, seconds, business_seconds)
        SELECT f.workspace_id, tl.label_id, f.id, f.kind, f.at, f.seconds, f.business_seconds
        FROM new_rows tl JOIN conversation_facts f ON f.thread_id = tl.thread_id
        WHERE (f.seconds IS NOT NULL OR f.business_seconds IS NOT NULL)
          AND NOT EXISTS (SELECT 1 FROM conversation_facts_pending p WHERE p.fact_id = f.id);
    ELSE
        PERFORM conversation_rollups_lock(ARRAY(SELECT DISTINCT workspace_id FROM old_rows));
        PERFORM 1 FROM threads WHERE id IN (SELECT thread_id FROM old_rows) ORDER BY id FOR UPDATE;
        PERFORM conversation_rollups_apply(ARRAY(
            SELECT r FROM old_rows tl JOIN conversation_facts f ON f.thread_id = tl.thread_id,
                LATERAL conversation_rollup_rows(
                    f.workspace_id, f.kind, f.at, f.seconds, f.business_seconds, f.user_id, f.team_id, f.channel_id,
                    ARRAY[tl.label_id], false, -1) r
            WHERE NOT EXISTS (SELECT 1 FROM conversation_facts_pending p WHERE p.fact_id = f.id)));
        DELETE FROM conversation_label_facts lf USING old_rows tl, conversation_facts f
        WHERE f.thread_id = tl.thread_id AND lf.label_id = tl.label_id AND lf.fact_id = f.id;
    END IF;
    RETURN NULL;
END $$;

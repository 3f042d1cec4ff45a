-- The live definition of conversation_rollups_on_facts(): the one place it is written (see ../README.md).
-- Facts inserted, deleted (a thread's cascade) or updated (business seconds refigured when the
-- hours change) reach `conversation_rollups` in the same statement. A label figure goes to the
-- labels the thread carries now: the thread rows are locked first (as `thread_labels`' trigger
-- does), so a label added meanwhile is counted by exactly one of the two.
CREATE OR REPLACE FUNCTION conversation_rollups_on_facts() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        PERFORM 1 FROM threads WHERE id IN (SELECT DISTINCT thread_id FROM new_rows) ORDER BY id FOR SHARE;
        PERFORM conversation_rollups_apply(ARRAY(
            SELECT r FROM new_rows f, LATERAL conversation_rollup_rows(
                f.workspace_id, f.kind, f.at, f.seconds, f.business_seconds, f.user_id, f.team_id, f.channel_id,
                ARRAY(SELECT tl.label_id FROM thread_labels tl WHERE tl.thread_id = f.thread_id), true, 1) r));
    END IF;
    IF TG_OP IN ('DELETE', 'UPDATE') THEN
        PERFORM conversation_rollups_apply(ARRAY(
            SELECT r FROM old_rows f, LATERAL conversation_rollup_rows(
                f.workspace_id, f.kind, f.at, f.seconds, f.business_seconds, f.user_id, f.team_id, f.channel_id,
                ARRAY(SELECT tl.label_id FROM thread_labels tl WHERE tl.thread_id = f.thread_id), true, -1) r));
    END IF;
    RETURN NULL;
END $$;

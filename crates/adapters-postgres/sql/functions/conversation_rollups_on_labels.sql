-- The live definition of conversation_rollups_on_labels(): the one place it is written (see ../README.md).
-- A thread gaining (or losing) a label moves every fact of the thread into (out of) the label's
-- figures in `conversation_rollups`: a label figure goes to the labels the thread carries now.
CREATE OR REPLACE FUNCTION conversation_rollups_on_labels() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM 1 FROM threads WHERE id IN (SELECT DISTINCT thread_id FROM new_rows) ORDER BY id FOR NO KEY UPDATE;
        PERFORM conversation_rollups_apply(ARRAY(
            SELECT r FROM new_rows tl JOIN conversation_facts f ON f.thread_id = tl.thread_id,
                LATERAL conversation_rollup_rows(
                    f.workspace_id, f.kind, f.at, f.seconds, f.business_seconds, f.user_id, f.team_id, f.channel_id,
                    ARRAY[tl.label_id], false, 1) r));
    ELSE
        PERFORM 1 FROM threads WHERE id IN (SELECT DISTINCT thread_id FROM old_rows) ORDER BY id FOR NO KEY UPDATE;
        PERFORM conversation_rollups_apply(ARRAY(
            SELECT r FROM old_rows tl JOIN conversation_facts f ON f.thread_id = tl.thread_id,
                LATERAL conversation_rollup_rows(
                    f.workspace_id, f.kind, f.at, f.seconds, f.business_seconds, f.user_id, f.team_id, f.channel_id,
                    ARRAY[tl.label_id], false, -1) r));
    END IF;
    RETURN NULL;
END $$;

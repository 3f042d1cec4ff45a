-- The live definition of conversation_rollups_fold(): the one place it is written (see ../README.md).
-- The rollup worker's batch: claims up to `batch` pending facts (SKIP LOCKED, so any number of
-- workers share the queue), folds those whose thread it can hold into `conversation_rollups` (one
-- upsert per touched row, with the labels their threads carry now; the durations copied per label
-- into `conversation_label_facts`) and takes them off the queue,
-- in the caller's transaction. A workspace whose rollup another transaction is changing
-- (conversation_rollups_lock()) and a thread being labelled or deleted are skipped, never waited
-- for (their facts stay pending for a later batch), so a worker never waits on anyone and a send
-- never waits on a worker (FOR KEY SHARE does not conflict with updating a thread). Returns how many
-- pending facts it took off the queue.
CREATE OR REPLACE FUNCTION conversation_rollups_fold(batch integer) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    claimed bigint[];
    free bigint[];
    held bigint[];
    done integer;
BEGIN
    SELECT array_agg(fact_id) INTO claimed
    FROM (SELECT fact_id FROM conversation_facts_pending ORDER BY fact_id LIMIT batch FOR UPDATE SKIP LOCKED) p;
    IF claimed IS NULL THEN
        RETURN 0;
    END IF;
    SELECT coalesce(array_agg(w), '{}') INTO free
    FROM (SELECT DISTINCT f.workspace_id AS w FROM conversation_facts f WHERE f.id = ANY (claimed) ORDER BY 1) x
    WHERE pg_try_advisory_xact_lock_shared(hashtextextended('conversation-rollups:' || w, 0));
    SELECT coalesce(array_agg(id), '{}') INTO held
    FROM (SELECT t.id FROM threads t
          WHERE t.id IN (SELECT f.thread_id FROM conversation_facts f
                         WHERE f.id = ANY (claimed) AND f.workspace_id = ANY (free))
          ORDER BY t.id FOR KEY SHARE SKIP LOCKED) t;
    PERFORM conversation_rollups_apply(ARRAY(
        SELECT r FROM conversation_facts f, LATERAL conversation_rollup_rows(
            f.workspace_id, f.kind, f.at, f.seconds, f.business_seconds, f.user_id, f.team_id, f.channel_id,
            ARRAY(SELECT tl.label_id FROM thread_labels tl WHERE tl.thread_id = f.thread_id), true, 1) r
        WHERE f.id = ANY (claimed) AND f.thread_id = ANY (held)));
    INSERT INTO conversation_label_facts (workspace_id, label_id, fact_id, kind, at, seconds, business_seconds)
    SELECT f.workspace_id, tl.label_id, f.id, f.kind, f.at, f.seconds, f.business_seconds
    FROM conversation_facts f JOIN thread_labels tl ON tl.thread_id = f.thread_id
    WHERE f.id = ANY (claimed) AND f.thread_id = ANY (held)
      AND (f.seconds IS NOT NULL OR f.business_seconds IS NOT NULL);
    -- A fact no longer there (kept for safety: a deletion takes its pending row with it).
    DELETE FROM conversation_facts_pending p
    WHERE p.fact_id = ANY (claimed)
      AND (EXISTS (SELECT 1 FROM conversation_facts f WHERE f.id = p.fact_id AND f.thread_id = ANY (held))
           OR NOT EXISTS (SELECT 1 FROM conversation_facts f WHERE f.id = p.fact_id));
    GET DIAGNOSTICS done = ROW_COUNT;
    RETURN done;
END $$;

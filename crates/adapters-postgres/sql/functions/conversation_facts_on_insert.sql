-- The live definition of conversation_facts_on_insert(): the one place it is written (see ../README.md).
-- New facts wait in `conversation_facts_pending` until the rollup worker folds them into
-- `conversation_rollups` after their transaction commits (conversation_rollups_fold()). One
-- statement per inserting statement, and no row shared with another writer: a send pays for
-- nothing else.
CREATE OR REPLACE FUNCTION conversation_facts_on_insert() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO conversation_facts_pending (fact_id) SELECT id FROM new_rows;
    RETURN NULL;
END $$;

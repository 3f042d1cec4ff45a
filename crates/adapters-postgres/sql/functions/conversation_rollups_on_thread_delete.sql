-- The live definition of conversation_rollups_on_thread_delete(): the one place it is written (see ../README.md).
-- A deleted thread's labels go before its cascade deletes its facts and labels: the cascade's
-- statement triggers fire once both are gone, each finding the other missing, and the thread's
-- label figures would stay in `conversation_rollups`. Deleted here, its `thread_labels` trigger
-- still finds the facts and takes them out of the labels' figures.
CREATE OR REPLACE FUNCTION conversation_rollups_on_thread_delete() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM thread_labels WHERE thread_id = OLD.id;
    RETURN OLD;
END $$;

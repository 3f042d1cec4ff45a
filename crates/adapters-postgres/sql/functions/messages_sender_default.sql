-- The live definition of messages_sender_default(): the one place it is written (see ../README.md).
-- A message stored without its sender (by a writer that predates `sender_type`, such as the
-- seeder or a test's fixture) gets the one its row gives, as the lifecycle migration filled the
-- messages stored before it: the contact for inbound, else its author, else an unknown API key.
CREATE OR REPLACE FUNCTION messages_sender_default() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.sender_type IS NULL THEN
        IF NEW.direction = 'inbound' THEN
            NEW.sender_type := 'contact';
            NEW.sender_id := (SELECT contact_id FROM threads WHERE workspace_id = NEW.workspace_id AND id = NEW.thread_id);
        ELSIF NEW.author_user_id IS NOT NULL THEN
            NEW.sender_type := 'user';
            NEW.sender_id := NEW.author_user_id;
        ELSIF NEW.author_ai_agent_id IS NOT NULL THEN
            NEW.sender_type := 'ai_agent';
            NEW.sender_id := NEW.author_ai_agent_id;
        ELSE
            NEW.sender_type := 'api_key';
            NEW.sender_id := NULL;
        END IF;
    END IF;
    RETURN NEW;
END $$;

-- Contacts as an integrator resource (issue 15): erasure and the indexes of the listing filters.

-- Erasure (GDPR art. 17) keeps the row, so that threads, messages, counts and analytics that
-- point at it stay right, but clears every personal field; an erased contact is found by nothing.
-- `country` is kept: it is not a personal identifier on its own and the Analytics page's
-- per-country figures count it (docs/product/contacts.md, "Erasing a contact").
ALTER TABLE contacts ADD COLUMN erased_at timestamptz;
ALTER TABLE contacts ADD CONSTRAINT contacts_erased_check CHECK (
    erased_at IS NULL
    OR (name IS NULL AND phone IS NULL AND email IS NULL AND platform_user_id IS NULL
        AND language IS NULL AND note IS NULL)
);

-- An erased person's messages keep their row (status, times, direction feed every count) with the
-- content emptied. New messages are still 1 to 4096 characters: the API validates that.
ALTER TABLE messages DROP CONSTRAINT messages_content_check;
ALTER TABLE messages ADD CONSTRAINT messages_content_check CHECK (char_length(content) <= 4096) NOT VALID;
ALTER TABLE messages VALIDATE CONSTRAINT messages_content_check;

-- POST/PATCH /v1/contacts refuse an e-mail another contact of the workspace has (409), checked
-- in the writing transaction under a lock on (workspace, e-mail) rather than by a unique index:
-- contacts written before that rule (and by the platforms' inbound paths) may share one (a family
-- address), and a unique index would make this migration fail on such data.

-- GET /v1/contacts?q=: case-insensitive name prefix (`lower(name) LIKE 'ana%'`).
CREATE INDEX contacts_name_prefix_idx ON contacts (workspace_id, lower(name) text_pattern_ops, id)
    WHERE erased_at IS NULL;
-- GET /v1/contacts?updated_since=.
CREATE INDEX contacts_updated_idx ON contacts (workspace_id, updated_at, id) WHERE erased_at IS NULL;
-- GET /v1/contacts without filters and the keyset on id.
CREATE INDEX contacts_live_idx ON contacts (workspace_id, id) WHERE erased_at IS NULL;

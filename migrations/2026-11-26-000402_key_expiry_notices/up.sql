-- The expiry notices handled for each key (7 and 1 days before it expires): one row per key and
-- notice, written in the transaction that queues the e-mails (or decides none is needed), so each
-- notice is sent once however many instances look for due ones.
CREATE TABLE api_key_expiry_notices (
    workspace_id bigint      NOT NULL,
    api_key_id   bigint      NOT NULL,
    notice       text        NOT NULL CHECK (notice IN ('7d', '1d')),
    -- false: handled without a mail (the key was revoked or rolled, or a later notice covered it).
    mailed       boolean     NOT NULL,
    handled_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (api_key_id, notice),
    FOREIGN KEY (workspace_id, api_key_id) REFERENCES api_keys (workspace_id, id) ON DELETE CASCADE
);

-- The notice worker looks for keys by expiry: only keys that expire at all are indexed.
CREATE INDEX api_keys_expires_at_idx ON api_keys (expires_at) WHERE expires_at IS NOT NULL;

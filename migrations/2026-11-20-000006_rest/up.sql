-- POST /v1/messages idempotency: a retried request with the same Idempotency-Key returns the
-- first result. Keys are kept for 24 hours.
CREATE TABLE idempotency_keys (
    workspace_id bigint      NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    key          text        NOT NULL CHECK (char_length(key) BETWEEN 1 AND 255),
    fingerprint  bytea       NOT NULL CHECK (octet_length(fingerprint) = 32),
    message_id   bigint,
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (workspace_id, key),
    FOREIGN KEY (workspace_id, message_id) REFERENCES messages (workspace_id, id) ON DELETE CASCADE
);
CREATE INDEX idempotency_keys_created_idx ON idempotency_keys (created_at);

-- GET /v1/messages without a channel filter: the workspace's messages newest first.
CREATE INDEX messages_workspace_idx ON messages (workspace_id, id DESC);

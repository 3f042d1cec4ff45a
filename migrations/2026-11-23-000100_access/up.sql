-- One access policy (docs/access.md): scoped API keys, names per membership, invitations for new
-- members, and the audit log.

-- The scopes a key was granted; NULL is a full-access key (every scope, also those added later).
ALTER TABLE api_keys ADD COLUMN scopes text[];

-- A member's name in this workspace; NULL shows the account's name. Renaming a member in one
-- workspace changes nothing another workspace sees.
ALTER TABLE workspace_members ADD COLUMN name text CHECK (name IS NULL OR char_length(name) BETWEEN 1 AND 100);

-- One-time links for people added without a password: only the SHA-256 of the token is kept.
CREATE TABLE member_invitations (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    workspace_id bigint      NOT NULL,
    user_id      bigint      NOT NULL,
    token_digest bytea       NOT NULL UNIQUE CHECK (octet_length(token_digest) = 32),
    expires_at   timestamptz NOT NULL,
    used_at      timestamptz,
    created_at   timestamptz NOT NULL DEFAULT now(),
    FOREIGN KEY (workspace_id, user_id) REFERENCES workspace_members (workspace_id, user_id) ON DELETE CASCADE
);
CREATE INDEX member_invitations_member_idx ON member_invitations (workspace_id, user_id);

-- Who did what, written in the same transaction as the change. Never a secret in it.
CREATE TABLE audit_events (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    workspace_id bigint      NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    occurred_at  timestamptz NOT NULL DEFAULT now(),
    action       text        NOT NULL,
    actor_type   text        NOT NULL CHECK (actor_type IN ('user', 'api_key', 'cli', 'system')),
    actor_id     bigint,
    actor_label  text,
    target_type  text,
    target_id    bigint,
    ip           text,
    user_agent   text,
    request_id   text,
    details      jsonb       NOT NULL DEFAULT '{}'
);
-- Newest first per workspace, and the filters.
CREATE INDEX audit_events_feed_idx ON audit_events (workspace_id, id DESC);
CREATE INDEX audit_events_action_idx ON audit_events (workspace_id, action, id DESC);
CREATE INDEX audit_events_time_idx ON audit_events (occurred_at);

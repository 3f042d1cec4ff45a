-- Sessions of the settings web app (cookie `wms_session`). The cookie carries 32 random bytes;
-- only their SHA-256 is stored, so a database dump signs nobody in. A session is revoked by
-- setting revoked_at (sign-out), and ends at expires_at whatever happens.
CREATE TABLE sessions (
    id           bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    token_digest bytea       NOT NULL UNIQUE CHECK (length(token_digest) = 32),
    user_id      bigint      NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    -- The one workspace the session works in; NULL while a member of several workspaces has not
    -- picked one yet (such a session opens no workspace page).
    workspace_id bigint      REFERENCES workspaces (id) ON DELETE CASCADE,
    created_at   timestamptz NOT NULL DEFAULT now(),
    expires_at   timestamptz NOT NULL,
    revoked_at   timestamptz,
    CHECK (expires_at > created_at)
);
CREATE INDEX sessions_user_idx ON sessions (user_id);
-- Expired sessions are swept at sign-in.
CREATE INDEX sessions_expires_idx ON sessions (expires_at);

-- Memberships only their owners accept (docs/product/invitations.md): a membership is `invited`
-- until the person proves the address by the e-mailed link, `active`, or `deactivated`.
-- `is_active` stays, computed from `status`, so every reader of it (sign-in, tokens, sessions,
-- assignment) leaves invited memberships out without a change.
ALTER TABLE workspace_members
    ADD COLUMN status text NOT NULL DEFAULT 'active' CHECK (status IN ('invited', 'active', 'deactivated')),
    -- When the person accepted (or an operator vouched for them): a deactivated membership that
    -- was never accepted goes back to `invited`, never to `active`, when reactivated.
    ADD COLUMN joined_at timestamptz DEFAULT now();

-- Existing memberships: an account with a password was active on its own and stays so; one
-- without a password never proved its address and waits for an e-mailed invitation.
UPDATE workspace_members m
SET status = CASE
        WHEN u.password_hash = '!invited' THEN 'invited'
        WHEN m.is_active THEN 'active'
        ELSE 'deactivated'
    END,
    joined_at = CASE WHEN u.password_hash = '!invited' THEN NULL ELSE m.created_at END
FROM users u
WHERE u.id = m.user_id;

ALTER TABLE workspace_members DROP COLUMN is_active;
ALTER TABLE workspace_members ADD COLUMN is_active boolean GENERATED ALWAYS AS (status = 'active') STORED;

-- Links of the old scheme were shown to whoever added the person, not sent to the address: they
-- prove nothing, so they stop working (410). An admin re-sends the invitation, which e-mails a new
-- link to the address.
DELETE FROM member_invitations WHERE used_at IS NULL;

-- One-time links to choose a new password (1 hour; only the SHA-256 of the token is kept).
CREATE TABLE password_resets (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id      bigint      NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    token_digest bytea       NOT NULL UNIQUE CHECK (octet_length(token_digest) = 32),
    expires_at   timestamptz NOT NULL,
    used_at      timestamptz,
    created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX password_resets_user_idx ON password_resets (user_id);

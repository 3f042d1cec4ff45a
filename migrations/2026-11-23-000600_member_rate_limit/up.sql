-- The rate-limit window of a user credential belongs to the member (workspace, user), shared by
-- all of their login tokens and sessions, on /v1 and the assistant endpoints alike
-- (decisions.md, "Abuse limits"; docs/rate-limit.md, "Whose window"). Before, each login token had
-- a window of its own, so signing in again multiplied a user's quota, and the assistant endpoints
-- counted nothing for members.
ALTER TABLE rate_limit_windows
    ADD COLUMN workspace_id bigint,
    ADD COLUMN user_id      bigint,
    ADD CONSTRAINT rate_limit_windows_member_fkey FOREIGN KEY (workspace_id, user_id)
        REFERENCES workspace_members (workspace_id, user_id) ON DELETE CASCADE,
    ADD CONSTRAINT rate_limit_windows_member_key UNIQUE (workspace_id, user_id);

-- Per-token windows are retired: their counts are not carried over (a member's window starts
-- empty once, at the upgrade).
DELETE FROM rate_limit_windows WHERE user_token_id IS NOT NULL;
ALTER TABLE rate_limit_windows DROP CONSTRAINT rate_limit_windows_check;
ALTER TABLE rate_limit_windows ADD CONSTRAINT rate_limit_windows_owner_check
    CHECK (num_nonnulls(api_key_id, user_id) = 1 AND user_token_id IS NULL
           AND (workspace_id IS NULL) = (user_id IS NULL));

-- Same signature, columns and outcomes as 2026-11-20-000009; only the window of a login token
-- changes (the member's instead of the token's).

--! include functions/wms_authenticate.sql sha256:436b97c76b4f6b27

--! include functions/wms_admit_member.sql sha256:6407f3bb38dfe571

-- Issue 30: the conversation's lifecycle (docs/product/snooze.md, docs/product/assignment.md).

-- Statuses are a known set: a status outside it becomes `open` (the stats triggers move the counts).
UPDATE threads SET status = 'open' WHERE status NOT IN ('open', 'pending', 'snoozed', 'resolved');
ALTER TABLE threads
    ADD COLUMN snoozed_until     timestamptz,
    ADD COLUMN status_reason     text CHECK (status_reason IN ('manual', 'contact_replied', 'snooze_expired')),
    ADD COLUMN team_id           bigint,
    ADD COLUMN assigned_at       timestamptz,
    ADD COLUMN assignment_reason text CHECK (assignment_reason IN ('manual', 'round_robin', 'balanced', 'team_deleted')),
    -- Set while the thread waits with its team for a member (the team's queue, oldest first).
    ADD COLUMN waiting_since     timestamptz,
    ADD CONSTRAINT threads_status_known CHECK (status IN ('open', 'pending', 'snoozed', 'resolved')),
    ADD CONSTRAINT threads_snoozed_until_only_snoozed CHECK (snoozed_until IS NULL OR status = 'snoozed'),
    ADD CONSTRAINT threads_team_fkey FOREIGN KEY (workspace_id, team_id)
        REFERENCES teams (workspace_id, id) ON DELETE SET NULL (team_id);
-- The snooze timer's scan: only timed snoozes are in it, in due order.
CREATE INDEX threads_snooze_due_idx ON threads (snoozed_until) WHERE status = 'snoozed' AND snoozed_until IS NOT NULL;
-- Each team's waiting queue, oldest first.
CREATE INDEX threads_waiting_idx ON threads (team_id, waiting_since, id) WHERE waiting_since IS NOT NULL;
-- A member's load (open + pending threads), counted for every automatic assignment.
CREATE INDEX threads_member_load_idx ON threads (workspace_id, assignee_user_id)
    WHERE assignee_user_id IS NOT NULL AND status IN ('open', 'pending');

ALTER TABLE workspace_members
    ADD COLUMN availability text NOT NULL DEFAULT 'online' CHECK (availability IN ('online', 'away'));

ALTER TABLE teams
    ADD COLUMN assignment_mode     text NOT NULL DEFAULT 'manual' CHECK (assignment_mode IN ('manual', 'round_robin', 'balanced')),
    ADD COLUMN assignment_capacity integer CHECK (assignment_capacity > 0);

-- When the member was last given a thread of the team (round robin's turn, balanced's tie-break).
ALTER TABLE team_members ADD COLUMN last_assigned_at timestamptz;

ALTER TABLE channels
    ADD COLUMN default_team_id bigint,
    ADD CONSTRAINT channels_default_team_fkey FOREIGN KEY (workspace_id, default_team_id)
        REFERENCES teams (workspace_id, id) ON DELETE SET NULL (default_team_id);

-- Who sent each message. Stored messages carry the sender their author gives, else the contact
-- (inbound) or an API key unknown by now (outbound).
ALTER TABLE messages
    ADD COLUMN sender_type text CHECK (sender_type IN ('contact', 'user', 'ai_agent', 'api_key')),
    ADD COLUMN sender_id   bigint;
UPDATE messages m SET sender_type = 'contact', sender_id = t.contact_id
FROM threads t
WHERE m.direction = 'inbound' AND t.workspace_id = m.workspace_id AND t.id = m.thread_id;
UPDATE messages SET sender_type = CASE
        WHEN author_user_id IS NOT NULL THEN 'user'
        WHEN author_ai_agent_id IS NOT NULL THEN 'ai_agent'
        ELSE 'api_key' END,
    sender_id = coalesce(author_user_id, author_ai_agent_id)
WHERE direction = 'outbound';
ALTER TABLE messages ALTER COLUMN sender_type SET NOT NULL;
--! include functions/messages_sender_default.sql sha256:14b223b9d7adee2c
CREATE TRIGGER messages_sender_default BEFORE INSERT ON messages
    FOR EACH ROW WHEN (NEW.sender_type IS NULL) EXECUTE FUNCTION messages_sender_default();

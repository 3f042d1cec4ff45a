DROP TRIGGER messages_sender_default ON messages;
DROP FUNCTION messages_sender_default();
ALTER TABLE messages DROP COLUMN sender_id, DROP COLUMN sender_type;
ALTER TABLE channels DROP CONSTRAINT channels_default_team_fkey, DROP COLUMN default_team_id;
ALTER TABLE team_members DROP COLUMN last_assigned_at;
ALTER TABLE teams DROP COLUMN assignment_capacity, DROP COLUMN assignment_mode;
ALTER TABLE workspace_members DROP COLUMN availability;
DROP INDEX threads_member_load_idx;
DROP INDEX threads_waiting_idx;
DROP INDEX threads_snooze_due_idx;
ALTER TABLE threads
    DROP CONSTRAINT threads_team_fkey,
    DROP CONSTRAINT threads_snoozed_until_only_snoozed,
    DROP CONSTRAINT threads_status_known,
    DROP COLUMN waiting_since,
    DROP COLUMN assignment_reason,
    DROP COLUMN assigned_at,
    DROP COLUMN team_id,
    DROP COLUMN status_reason,
    DROP COLUMN snoozed_until;

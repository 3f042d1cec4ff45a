-- Issue 15: GET /v1/threads pages newest first by id under any one filter. Each filter's index
-- ends in the id, so a page (first or ten-thousandth) is one index range scan of `limit + 1`
-- entries after the cursor, never a sort of every match. These replace the (workspace_id, x)
-- indexes they extend: the longer key serves every query the shorter one did.
CREATE INDEX threads_status_id_idx ON threads (workspace_id, status, id);
CREATE INDEX threads_contact_id_idx ON threads (workspace_id, contact_id, id);
CREATE INDEX threads_channel_id_idx ON threads (workspace_id, channel_id, id);
DROP INDEX threads_status_idx;
DROP INDEX threads_contact_idx;
DROP INDEX threads_channel_idx;
-- assignee_type + assignee_id: one partial index per kind of assignee.
CREATE INDEX threads_assignee_user_idx ON threads (workspace_id, assignee_user_id, id) WHERE assignee_user_id IS NOT NULL;
CREATE INDEX threads_assignee_team_idx ON threads (workspace_id, assignee_team_id, id) WHERE assignee_team_id IS NOT NULL;
CREATE INDEX threads_assignee_ai_agent_idx ON threads (workspace_id, assignee_ai_agent_id, id) WHERE assignee_ai_agent_id IS NOT NULL;
-- updated_since: a sync polls for the few threads changed since its last poll; without this index
-- that page walks every thread of the workspace (0.6 s at 400,000). The matches are read from this
-- range and sorted by id. Cost: an outbound message's update of updated_at can no longer be HOT.
CREATE INDEX threads_updated_idx ON threads (workspace_id, updated_at);
-- label: the threads carrying a label, in id order.
CREATE INDEX thread_labels_label_thread_idx ON thread_labels (workspace_id, label_id, thread_id);
DROP INDEX thread_labels_label_idx;
-- Team listings page by id; a member's teams (membership checks, deletion of a member).
CREATE INDEX team_members_user_idx ON team_members (workspace_id, user_id);

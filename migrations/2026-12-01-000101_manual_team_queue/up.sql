-- A thread routed to a team now always joins the team's queue (`waiting_since`); a manual team's
-- queue is served once its mode changes. Threads routed to a manual team before this were left
-- out of it: those the team itself still holds, open, pending or snoozed (a snoozed thread keeps
-- its place, counted again once it reopens), that no one ever assigned
-- (no `assignment_reason`: a thread given to the team by hand says `manual`), join the queue from
-- when they were created, so a switch of mode hands them out, oldest first.
UPDATE threads th
   SET waiting_since = th.created_at
  FROM teams t
 WHERE t.workspace_id = th.workspace_id AND t.id = th.assignee_team_id
   AND t.assignment_mode = 'manual'
   AND th.assignee_type = 'team' AND th.team_id = th.assignee_team_id
   AND th.waiting_since IS NULL AND th.assignment_reason IS NULL
   AND th.status IN ('open', 'pending', 'snoozed');

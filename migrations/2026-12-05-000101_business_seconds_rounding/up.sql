-- Business seconds are now equal to the wall-clock seconds wherever every moment counts (no hours
-- set, or a duration entirely inside them): they were computed from instants cut to milliseconds,
-- the wall-clock ones from the exact difference, so about one duration in a thousand was a second
-- apart. The figures stored before are refigured in the background by the reports' worker, the
-- same way as after a change of a workspace's hours (`business_hours_refigures`).
INSERT INTO business_hours_refigures (workspace_id, up_to)
SELECT w.id, (SELECT last_value FROM conversation_facts_id_seq)
FROM workspaces w
WHERE EXISTS (SELECT 1 FROM conversation_facts f WHERE f.workspace_id = w.id)
ON CONFLICT (workspace_id) DO UPDATE SET up_to = excluded.up_to, after = 0, changed_at = now();

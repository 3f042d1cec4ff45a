DROP INDEX IF EXISTS messages_workspace_idx;
DROP TABLE IF EXISTS idempotency_keys;

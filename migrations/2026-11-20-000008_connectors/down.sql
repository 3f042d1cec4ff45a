ALTER TABLE messages DROP COLUMN IF EXISTS next_dispatch_at;
ALTER TABLE messages DROP COLUMN IF EXISTS dispatch_attempts;
ALTER TABLE messages DROP COLUMN IF EXISTS template;
DROP INDEX IF EXISTS channels_verify_token_idx;
DROP INDEX IF EXISTS channels_platform_account_key;
ALTER TABLE channels DROP COLUMN IF EXISTS send_paused_until;
ALTER TABLE channels DROP COLUMN IF EXISTS verify_token_digest;
ALTER TABLE channels DROP COLUMN IF EXISTS platform_account_id;

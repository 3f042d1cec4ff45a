-- Channel connectors (issue 9): sending through the platforms and taking their callbacks.

-- The platform's id of the account a channel sends from (WhatsApp phone number id, Facebook page
-- id, Instagram account id). Not a secret; it routes the platforms' callbacks to their channel.
ALTER TABLE channels ADD COLUMN platform_account_id text CHECK (char_length(platform_account_id) BETWEEN 1 AND 64);
-- SHA-256 of the channel's verify token, for the platforms' GET subscription handshake.
ALTER TABLE channels ADD COLUMN verify_token_digest bytea CHECK (octet_length(verify_token_digest) = 32);
-- Set when the platform rate-limits the channel: sending pauses until then instead of failing.
ALTER TABLE channels ADD COLUMN send_paused_until timestamptz;
CREATE UNIQUE INDEX channels_platform_account_key ON channels (channel_type, platform_account_id) WHERE platform_account_id IS NOT NULL;
CREATE INDEX channels_verify_token_idx ON channels (channel_type, verify_token_digest) WHERE verify_token_digest IS NOT NULL;

-- A template send: {"name", "language", "parameters": [...]}. Outside WhatsApp's 24-hour
-- customer-service window only templates are delivered.
ALTER TABLE messages ADD COLUMN template jsonb;
-- Dispatch bookkeeping: attempts so far, and when the dispatcher may next take the message (a
-- claim moves it forward as a lease, so a crashed worker's message is taken again).
ALTER TABLE messages ADD COLUMN dispatch_attempts integer NOT NULL DEFAULT 0;
ALTER TABLE messages ADD COLUMN next_dispatch_at timestamptz;

-- API key lifecycle: rolling a key with a grace period, and the address a key was last used from.

-- The key that replaced this one when it was rolled; cleared if that key is deleted. The foreign
-- key includes workspace_id (tenancy: a key can only point at a key of its own workspace).
ALTER TABLE api_keys ADD COLUMN rolled_to_id bigint;
ALTER TABLE api_keys ADD CONSTRAINT api_keys_rolled_to_fkey FOREIGN KEY (workspace_id, rolled_to_id)
    REFERENCES api_keys (workspace_id, id) ON DELETE SET NULL (rolled_to_id);

-- The client address of a request the key authenticated, written with last_used_at (at most once
-- a minute), never on its own.
ALTER TABLE api_keys ADD COLUMN last_used_ip text;

-- The signature gains p_client (the request's address) and a revocation may lie in the future
-- (a rolled key's grace period).
DROP FUNCTION wms_authenticate(text, bytea, text[], integer, integer, integer);
--! include functions/wms_authenticate.sql sha256:030d013a3c664eff

DROP INDEX api_keys_expires_at_idx;
DROP TABLE api_key_expiry_notices;

DROP FUNCTION IF EXISTS wms_authenticate(text, bytea, text[], integer, integer);
DROP INDEX IF EXISTS user_tokens_member_idx;
DROP TABLE IF EXISTS login_throttle;
DROP TABLE IF EXISTS rate_limit_windows;

DROP TABLE audit_events;
DROP TABLE member_invitations;
ALTER TABLE workspace_members DROP COLUMN name;
ALTER TABLE api_keys DROP COLUMN scopes;

DROP TABLE password_resets;
ALTER TABLE workspace_members DROP COLUMN is_active;
ALTER TABLE workspace_members ADD COLUMN is_active boolean NOT NULL DEFAULT true;
UPDATE workspace_members SET is_active = (status <> 'deactivated');
ALTER TABLE workspace_members DROP COLUMN status, DROP COLUMN joined_at;

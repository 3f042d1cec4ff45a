ALTER TABLE messages DROP COLUMN platform_tag;
ALTER TABLE threads DROP COLUMN latest_inbound_at;

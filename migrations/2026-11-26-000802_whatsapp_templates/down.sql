DROP TABLE whatsapp_templates;
DROP INDEX channels_waba_id;
ALTER TABLE channels DROP COLUMN templates_synced_at;
ALTER TABLE channels DROP COLUMN waba_id;

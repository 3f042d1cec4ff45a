-- The WhatsApp Business Account of a WhatsApp channel: its templates live there, and Meta's
-- template callbacks name it. Not a secret (it is an id), so kept in the clear to route callbacks.
ALTER TABLE channels ADD COLUMN waba_id text;
-- When the channel's templates were last synced (or claimed for a sync by a worker).
ALTER TABLE channels ADD COLUMN templates_synced_at timestamptz;
CREATE INDEX channels_waba_id ON channels (waba_id) WHERE waba_id IS NOT NULL;

CREATE TABLE whatsapp_templates (
    workspace_id bigint NOT NULL,
    channel_id bigint NOT NULL,
    name text NOT NULL,
    language text NOT NULL,
    category text NOT NULL DEFAULT '',
    status text NOT NULL,
    quality text,
    parameters integer NOT NULL DEFAULT 0,
    body text NOT NULL DEFAULT '',
    rejected_reason text,
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (workspace_id, channel_id, name, language),
    FOREIGN KEY (workspace_id, channel_id) REFERENCES channels (workspace_id, id) ON DELETE CASCADE
);

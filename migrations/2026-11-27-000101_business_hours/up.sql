-- A workspace's business hours (docs/contract.md, "Conversation reports, business hours and
-- SLAs"): the record as set, validated by the domain. No row: none set, every hour counts.
CREATE TABLE business_hours (
    workspace_id BIGINT PRIMARY KEY REFERENCES workspaces (id) ON DELETE CASCADE,
    record JSONB NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
);

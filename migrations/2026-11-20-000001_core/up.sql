-- The whole data model of wms. Every table that belongs to a workspace carries workspace_id and
-- every foreign key to another workspace-owned row includes workspace_id, so a row can never point
-- into another workspace even through a bug.
-- Enumerations are text with CHECK constraints: readable in psql, cheap to extend in a migration.

CREATE TABLE workspaces (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name        text        NOT NULL CHECK (char_length(name) BETWEEN 1 AND 100),
    slug        text        NOT NULL UNIQUE CHECK (slug ~ '^[a-z0-9]+(-[a-z0-9]+)*$'),
    is_active   boolean     NOT NULL DEFAULT true,
    plan        text        NOT NULL CHECK (plan IN ('free', 'starter', 'growth', 'advanced')),
    time_zone   text        NOT NULL DEFAULT 'UTC',
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE users (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    email         text        NOT NULL CHECK (email = lower(email) AND position('@' IN email) > 1),
    name          text        NOT NULL CHECK (char_length(name) BETWEEN 1 AND 100),
    password_hash text        NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now()
);
-- Case-insensitive uniqueness even if a writer forgets to lowercase.
CREATE UNIQUE INDEX users_email_key ON users (lower(email));

CREATE TABLE workspace_members (
    workspace_id bigint      NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    user_id      bigint      NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    role         text        NOT NULL CHECK (role IN ('admin', 'agent')),
    is_active    boolean     NOT NULL DEFAULT true,
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (workspace_id, user_id)
);
CREATE INDEX workspace_members_user_idx ON workspace_members (user_id);

CREATE TABLE teams (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    workspace_id bigint      NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    name         text        NOT NULL CHECK (char_length(name) BETWEEN 1 AND 100),
    created_at   timestamptz NOT NULL DEFAULT now(),
    UNIQUE (workspace_id, id),
    UNIQUE (workspace_id, name)
);

CREATE TABLE team_members (
    workspace_id bigint NOT NULL,
    team_id      bigint NOT NULL,
    user_id      bigint NOT NULL,
    PRIMARY KEY (team_id, user_id),
    FOREIGN KEY (workspace_id, team_id) REFERENCES teams (workspace_id, id) ON DELETE CASCADE,
    FOREIGN KEY (workspace_id, user_id) REFERENCES workspace_members (workspace_id, user_id) ON DELETE CASCADE
);

CREATE TABLE channels (
    id                    bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    workspace_id          bigint      NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    channel_type          text        NOT NULL CHECK (channel_type IN ('whatsapp', 'messenger', 'instagram')),
    display_name          text        NOT NULL CHECK (char_length(display_name) BETWEEN 1 AND 100),
    identifier            text        NOT NULL CHECK (char_length(identifier) BETWEEN 1 AND 64),
    status                text        NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'pending', 'disconnected')),
    -- Platform credentials (ids, access tokens, app secret, verify token), encrypted by the
    -- application; never returned by any API.
    credentials_encrypted bytea,
    created_at            timestamptz NOT NULL DEFAULT now(),
    updated_at            timestamptz NOT NULL DEFAULT now(),
    UNIQUE (workspace_id, id),
    UNIQUE (workspace_id, channel_type, identifier)
);

CREATE TABLE contacts (
    id                bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    workspace_id      bigint      NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    name              text        CHECK (char_length(name) <= 200),
    phone             text        CHECK (phone ~ '^\+[1-9][0-9]{7,14}$'),
    email             text        CHECK (email = lower(email)),
    -- Messenger PSID or Instagram-scoped id, for contacts reached on those platforms.
    platform_user_id  text,
    country           text        CHECK (country ~ '^[A-Z]{2}$'),
    language          text        CHECK (char_length(language) BETWEEN 2 AND 35),
    note              text        CHECK (char_length(note) <= 5000),
    first_contacted_at timestamptz,
    last_contacted_at  timestamptz,
    created_at        timestamptz NOT NULL DEFAULT now(),
    updated_at        timestamptz NOT NULL DEFAULT now(),
    UNIQUE (workspace_id, id)
);
CREATE UNIQUE INDEX contacts_phone_key ON contacts (workspace_id, phone) WHERE phone IS NOT NULL;
CREATE INDEX contacts_email_idx ON contacts (workspace_id, email) WHERE email IS NOT NULL;
CREATE UNIQUE INDEX contacts_platform_user_key ON contacts (workspace_id, platform_user_id) WHERE platform_user_id IS NOT NULL;

CREATE TABLE labels (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    workspace_id bigint      NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    name         text        NOT NULL CHECK (char_length(name) BETWEEN 1 AND 50),
    color        text        NOT NULL DEFAULT '#6b7280' CHECK (color ~ '^#[0-9a-f]{6}$'),
    created_at   timestamptz NOT NULL DEFAULT now(),
    UNIQUE (workspace_id, id)
);
CREATE UNIQUE INDEX labels_name_key ON labels (workspace_id, lower(name));

CREATE TABLE ai_agents (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    workspace_id bigint      NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    name         text        NOT NULL CHECK (char_length(name) BETWEEN 1 AND 100),
    status       text        NOT NULL DEFAULT 'draft' CHECK (status IN ('active', 'draft')),
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now(),
    UNIQUE (workspace_id, id)
);

CREATE TABLE threads (
    id                   bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    workspace_id         bigint      NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    contact_id           bigint      NOT NULL,
    channel_id           bigint      NOT NULL,
    -- Spec 3.2: statuses depend on workspace data (typically open, resolved), so free text.
    status               text        NOT NULL DEFAULT 'open' CHECK (status ~ '^[a-z_]{1,32}$'),
    unread_count         integer     NOT NULL DEFAULT 0 CHECK (unread_count >= 0),
    assignee_type        text        CHECK (assignee_type IN ('user', 'team', 'ai_agent')),
    assignee_user_id     bigint,
    assignee_team_id     bigint,
    assignee_ai_agent_id bigint,
    -- Who holds the conversation when an AI agent is involved: ai, human, or a requested handover.
    handover_status      text        CHECK (handover_status IN ('ai', 'requested', 'human')),
    last_message_at      timestamptz,
    created_at           timestamptz NOT NULL DEFAULT now(),
    updated_at           timestamptz NOT NULL DEFAULT now(),
    UNIQUE (workspace_id, id),
    FOREIGN KEY (workspace_id, contact_id) REFERENCES contacts (workspace_id, id) ON DELETE CASCADE,
    FOREIGN KEY (workspace_id, channel_id) REFERENCES channels (workspace_id, id) ON DELETE CASCADE,
    FOREIGN KEY (workspace_id, assignee_user_id) REFERENCES workspace_members (workspace_id, user_id) ON DELETE SET NULL (assignee_user_id),
    FOREIGN KEY (workspace_id, assignee_team_id) REFERENCES teams (workspace_id, id) ON DELETE SET NULL (assignee_team_id),
    FOREIGN KEY (workspace_id, assignee_ai_agent_id) REFERENCES ai_agents (workspace_id, id) ON DELETE SET NULL (assignee_ai_agent_id),
    -- Exactly the id column of the assignee kind is set (or none at all).
    CHECK (
        (assignee_type IS NULL AND assignee_user_id IS NULL AND assignee_team_id IS NULL AND assignee_ai_agent_id IS NULL)
        OR (assignee_type = 'user' AND assignee_team_id IS NULL AND assignee_ai_agent_id IS NULL)
        OR (assignee_type = 'team' AND assignee_user_id IS NULL AND assignee_ai_agent_id IS NULL)
        OR (assignee_type = 'ai_agent' AND assignee_user_id IS NULL AND assignee_team_id IS NULL)
    )
);
CREATE INDEX threads_status_idx ON threads (workspace_id, status);
CREATE INDEX threads_contact_idx ON threads (workspace_id, contact_id);
CREATE INDEX threads_channel_idx ON threads (workspace_id, channel_id);

CREATE TABLE thread_labels (
    workspace_id bigint NOT NULL,
    thread_id    bigint NOT NULL,
    label_id     bigint NOT NULL,
    PRIMARY KEY (thread_id, label_id),
    FOREIGN KEY (workspace_id, thread_id) REFERENCES threads (workspace_id, id) ON DELETE CASCADE,
    FOREIGN KEY (workspace_id, label_id) REFERENCES labels (workspace_id, id) ON DELETE CASCADE
);
CREATE INDEX thread_labels_label_idx ON thread_labels (workspace_id, label_id);

CREATE TABLE messages (
    id                  bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    workspace_id        bigint      NOT NULL,
    thread_id           bigint      NOT NULL,
    channel_id          bigint      NOT NULL,
    direction           text        NOT NULL CHECK (direction IN ('inbound', 'outbound')),
    -- contact for inbound; human, ai or template for outbound.
    sender_kind         text        NOT NULL CHECK (sender_kind IN ('contact', 'human', 'ai', 'template')),
    author_user_id      bigint REFERENCES users (id) ON DELETE SET NULL,
    author_ai_agent_id  bigint REFERENCES ai_agents (id) ON DELETE SET NULL,
    content             text        NOT NULL CHECK (char_length(content) BETWEEN 1 AND 4096),
    status              text        NOT NULL CHECK (status IN ('queued', 'sent', 'delivered', 'read', 'failed')),
    queued_at           timestamptz,
    sent_at             timestamptz,
    delivered_at        timestamptz,
    read_at             timestamptz,
    failed_at           timestamptz,
    failure_reason      text,
    platform_message_id text,
    created_at          timestamptz NOT NULL DEFAULT now(),
    updated_at          timestamptz NOT NULL DEFAULT now(),
    UNIQUE (workspace_id, id),
    FOREIGN KEY (workspace_id, thread_id) REFERENCES threads (workspace_id, id) ON DELETE CASCADE,
    FOREIGN KEY (workspace_id, channel_id) REFERENCES channels (workspace_id, id) ON DELETE CASCADE,
    CHECK ((direction = 'inbound') = (sender_kind = 'contact'))
);
-- Listing a channel's messages newest first with keyset pagination on id.
CREATE INDEX messages_channel_idx ON messages (workspace_id, channel_id, id DESC);
CREATE INDEX messages_thread_idx ON messages (workspace_id, thread_id, id DESC);
-- Per channel and day statistics, and time-window filters.
CREATE INDEX messages_channel_created_idx ON messages (channel_id, created_at) INCLUDE (direction, status, sender_kind);
CREATE UNIQUE INDEX messages_platform_id_key ON messages (channel_id, platform_message_id) WHERE platform_message_id IS NOT NULL;
-- The dispatcher's queue of outbound messages to send.
CREATE INDEX messages_queued_idx ON messages (id) WHERE status = 'queued' AND direction = 'outbound';

CREATE TABLE webhook_destinations (
    id                    bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    workspace_id          bigint      NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    url                   text        NOT NULL CHECK (char_length(url) BETWEEN 1 AND 2048),
    platform              text        NOT NULL DEFAULT 'custom' CHECK (char_length(platform) BETWEEN 1 AND 50),
    events                text[]      NOT NULL CHECK (cardinality(events) > 0),
    active                boolean     NOT NULL DEFAULT true,
    -- Signing secrets, encrypted by the application; the previous one keeps signing until
    -- previous_secret_expires_at after a rotation.
    secret_encrypted      bytea       NOT NULL,
    previous_secret_encrypted bytea,
    previous_secret_expires_at timestamptz,
    disabled_reason       text,
    disabled_at           timestamptz,
    created_at            timestamptz NOT NULL DEFAULT now(),
    updated_at            timestamptz NOT NULL DEFAULT now(),
    UNIQUE (workspace_id, id)
);
CREATE INDEX webhook_destinations_workspace_idx ON webhook_destinations (workspace_id, id);

CREATE TABLE api_keys (
    id                 bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    workspace_id       bigint      NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    name               text        NOT NULL CHECK (char_length(name) BETWEEN 1 AND 100),
    -- SHA-256 of the full key; the key itself is never stored.
    key_digest         bytea       NOT NULL UNIQUE CHECK (octet_length(key_digest) = 32),
    masked_key         text        NOT NULL,
    created_by_user_id bigint REFERENCES users (id) ON DELETE SET NULL,
    created_at         timestamptz NOT NULL DEFAULT now(),
    expires_at         timestamptz,
    last_used_at       timestamptz,
    revoked_at         timestamptz,
    UNIQUE (workspace_id, id)
);
CREATE INDEX api_keys_workspace_idx ON api_keys (workspace_id, id);

-- Login tokens (wmsu_), each bound to one membership.
CREATE TABLE user_tokens (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    workspace_id bigint      NOT NULL,
    user_id      bigint      NOT NULL,
    token_digest bytea       NOT NULL UNIQUE CHECK (octet_length(token_digest) = 32),
    created_at   timestamptz NOT NULL DEFAULT now(),
    expires_at   timestamptz NOT NULL,
    last_used_at timestamptz,
    revoked_at   timestamptz,
    FOREIGN KEY (workspace_id, user_id) REFERENCES workspace_members (workspace_id, user_id) ON DELETE CASCADE
);

-- Keys the service generates for itself when the operator configures none (for example the key
-- that encrypts webhook secrets and channel credentials at rest), shared by every instance.
CREATE TABLE service_keys (
    name       text        PRIMARY KEY,
    key        bytea       NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);

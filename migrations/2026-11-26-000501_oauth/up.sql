-- wms as an OAuth 2.1 authorization server for MCP clients (docs/oauth.md): registered apps,
-- the grants members give them, one-time authorization codes and the tokens of each grant.
-- Codes and tokens are kept only as SHA-256 digests.

-- Apps registered by dynamic client registration (RFC 7591): public clients, no secret.
CREATE TABLE oauth_clients (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    client_id     text        NOT NULL UNIQUE CHECK (char_length(client_id) BETWEEN 16 AND 64),
    client_name   text        NOT NULL CHECK (char_length(client_name) BETWEEN 1 AND 100),
    redirect_uris text[]      NOT NULL CHECK (cardinality(redirect_uris) BETWEEN 1 AND 10),
    created_at    timestamptz NOT NULL DEFAULT now()
);

-- A member's consent for an app to use the assistant of one workspace. Revoking it ends every
-- token it issued; it goes with the membership.
CREATE TABLE oauth_grants (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    workspace_id bigint      NOT NULL,
    user_id      bigint      NOT NULL,
    client_id    bigint      NOT NULL REFERENCES oauth_clients (id) ON DELETE CASCADE,
    scope        text        NOT NULL,
    resource     text        NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    last_used_at timestamptz,
    revoked_at   timestamptz,
    UNIQUE (workspace_id, id),
    FOREIGN KEY (workspace_id, user_id) REFERENCES workspace_members (workspace_id, user_id) ON DELETE CASCADE
);
CREATE INDEX oauth_grants_member_idx ON oauth_grants (user_id, workspace_id);

-- Authorization codes: single use, short-lived, bound to the redirect URI, the PKCE challenge
-- and the resource. `used_at` is set by the exchange; a second exchange revokes the grant.
CREATE TABLE oauth_codes (
    id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    workspace_id   bigint      NOT NULL,
    grant_id       bigint      NOT NULL,
    code_digest    bytea       NOT NULL UNIQUE CHECK (octet_length(code_digest) = 32),
    redirect_uri   text        NOT NULL,
    code_challenge text        NOT NULL,
    expires_at     timestamptz NOT NULL,
    used_at        timestamptz,
    created_at     timestamptz NOT NULL DEFAULT now(),
    FOREIGN KEY (workspace_id, grant_id) REFERENCES oauth_grants (workspace_id, id) ON DELETE CASCADE
);
CREATE INDEX oauth_codes_grant_idx ON oauth_codes (grant_id);

-- Access (`wmso_`) and refresh (`wmsr_`) tokens of a grant. A refresh token is used once:
-- `used_at` marks its rotation, and presenting it again revokes the grant.
CREATE TABLE oauth_tokens (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    workspace_id bigint      NOT NULL,
    grant_id     bigint      NOT NULL,
    kind         text        NOT NULL CHECK (kind IN ('access', 'refresh')),
    token_digest bytea       NOT NULL UNIQUE CHECK (octet_length(token_digest) = 32),
    expires_at   timestamptz NOT NULL,
    used_at      timestamptz,
    created_at   timestamptz NOT NULL DEFAULT now(),
    FOREIGN KEY (workspace_id, grant_id) REFERENCES oauth_grants (workspace_id, id) ON DELETE CASCADE
);
CREATE INDEX oauth_tokens_grant_idx ON oauth_tokens (grant_id);

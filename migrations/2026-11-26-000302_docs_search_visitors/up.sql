-- Searches of the public documentation pages without credentials: at most 60 a minute per client
-- address (issue 28, finding 6; `docs/search.md`, "Visitors"). One row per client address (or IPv6
-- /64): the times of its searches of the last minute. Shared by every instance; a row a minute
-- past its newest search says nothing more than no row, so such rows are removed as searches go by.
CREATE TABLE docs_search_visitors (
    client     text          PRIMARY KEY,
    searches   timestamptz[] NOT NULL DEFAULT '{}',
    expires_at timestamptz   NOT NULL
);
CREATE INDEX docs_search_visitors_expiry_idx ON docs_search_visitors (expires_at);

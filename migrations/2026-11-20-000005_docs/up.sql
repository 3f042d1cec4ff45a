-- Product documentation for `search_product_docs` (issue 7). The documentation is global (the same
-- for every workspace), so these tables carry no workspace_id.

-- One row per page (`docs/product/<slug>.md`). Spec 3.2: only `ready` documents are searched.
CREATE TABLE docs_documents (
    id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    slug           text        NOT NULL UNIQUE CHECK (slug ~ '^[a-z0-9]+(-[a-z0-9]+)*$'),
    title          text        NOT NULL,
    category       text        NOT NULL,
    source_path    text        NOT NULL,
    -- SHA-256 (hex) of the page's bytes: an unchanged page is skipped on re-ingest.
    content_hash   text        NOT NULL,
    status         text        NOT NULL CHECK (status IN ('pending', 'ready', 'failed')),
    failure_reason text,
    -- The embeddings model that produced this page's chunk vectors; null when it has none.
    embedding_model text,
    created_at     timestamptz NOT NULL DEFAULT now(),
    updated_at     timestamptz NOT NULL DEFAULT now(),
    CHECK ((status = 'failed') = (failure_reason IS NOT NULL))
);

-- A page split by heading. `search` is weighted: title A, heading B, body C.
CREATE TABLE docs_chunks (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    document_id     bigint   NOT NULL REFERENCES docs_documents (id) ON DELETE CASCADE,
    ordinal         integer  NOT NULL CHECK (ordinal >= 0),
    heading         text     NOT NULL,
    body            text     NOT NULL,
    search          tsvector NOT NULL,
    -- No pgvector here: vectors are stored as arrays and searched exactly in the process.
    embedding       real[],
    embedding_model text,
    embedding_dim   integer,
    UNIQUE (document_id, ordinal),
    CHECK ((embedding IS NULL) = (embedding_model IS NULL)),
    CHECK (embedding IS NULL OR cardinality(embedding) = embedding_dim)
);
CREATE INDEX docs_chunks_search_idx ON docs_chunks USING gin (search);

-- Bumped by every ingest that changes anything, so running servers know to reload their vectors.
-- `chunks` counts the chunks of ready documents, for the lexeme weights below.
CREATE TABLE docs_index_state (
    id         boolean     PRIMARY KEY DEFAULT true CHECK (id),
    generation bigint      NOT NULL DEFAULT 0,
    chunks     integer     NOT NULL DEFAULT 0,
    changed_at timestamptz NOT NULL DEFAULT now()
);

-- How many ready chunks contain each lexeme (from ts_stat), refreshed by every ingest that changes
-- the index: the search weighs rare words above common ones, and words in most chunks do not
-- select candidates on their own.
CREATE TABLE docs_lexemes (
    lexeme text    PRIMARY KEY,
    chunks integer NOT NULL
);
INSERT INTO docs_index_state DEFAULT VALUES;

--! include functions/docs_full_text.sql sha256:f763a1ca62549839

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

-- The full-text search of `search_product_docs`: the best chunk of each of the best `max_hits`
-- ready documents for `search_text`, best first.
--
-- Documents and queries use the `english` configuration (stemming, stop words), so "revoking keys"
-- finds "revoke a key". `strict` is the user's text as a web-search query (every term, quoted
-- phrases, `-` to exclude; never a syntax error); `relaxed` is any of its stemmed terms, so a
-- paraphrase that misses one word still fills the list. A chunk's score adds:
--   2 when it matches the strict query (all terms): more than the rest can add up to, so strict
--     matches come first and the relaxed ones only fill up the list;
--   ts_rank_cd against the relaxed query, weights title (A) 1.0, heading (B) 0.4, body (C) 0.2,
--     normalised by log length and into 0..1 (1 | 32);
--   the share of the query's terms it contains, each weighted by its inverse chunk frequency
--     (docs_lexemes): cover density alone rewards neither matching more of the question nor
--     matching its rare words.
-- Candidates are the chunks containing the query's rarest terms: its terms from the rarest up, as
-- long as their chunk counts add up to at most 300 (always the rarest one). A chunk matching the
-- strict query contains them too. They are pre-ranked with the cheap ts_rank on those terms and
-- only the best 60 get the full score. Without that, a question made of common words ("how do I
-- create an API key") would score most of the corpus on every search, and the cost would grow
-- with the corpus; with it, the work per search stays about the same at 300 or 5,000 chunks.
--
-- PL/pgSQL so that its plan is cached per connection: planning this statement costs more than
-- running it. The generic plan keeps the GIN bitmap scan, since the tsqueries are computed anyway.
CREATE FUNCTION docs_full_text(search_text text, max_hits integer)
RETURNS TABLE (chunk_id bigint, document_id bigint, score double precision)
LANGUAGE plpgsql STABLE
SET plan_cache_mode = force_generic_plan
AS $fn$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    WITH lex AS (
        SELECT '''' || replace(replace(l.lexeme, '\', '\\'), '''', '''''') || '''' AS quoted,
               ln((st.chunks + 1)::float8 / (coalesce(s.chunks, 0) + 1)) + 1 AS weight,
               coalesce(s.chunks, 0) AS df
          FROM unnest(tsvector_to_array(to_tsvector('english', search_text))) AS l (lexeme)
         CROSS JOIN docs_index_state st
          LEFT JOIN docs_lexemes s ON s.lexeme = l.lexeme
    ), rare AS (
        SELECT quoted, row_number() OVER w AS n, sum(df) OVER w AS cumulative
          FROM lex WHERE df > 0 WINDOW w AS (ORDER BY df, quoted)
    ), q AS (
        SELECT websearch_to_tsquery('english', search_text) AS strict,
               coalesce((SELECT string_agg(quoted, ' | ') FROM lex), '')::tsquery AS relaxed,
               coalesce((SELECT string_agg(quoted, ' | ') FROM rare WHERE n = 1 OR cumulative <= 300), '')::tsquery
                   AS candidates,
               coalesce((SELECT array_agg(quoted::tsquery) FROM lex), '{}') AS terms,
               coalesce((SELECT array_agg(weight) FROM lex), '{}') AS weights,
               coalesce((SELECT sum(weight) FROM lex), 1) AS total_weight
    ), pre AS (
        SELECT c.id, c.document_id, c.search
          FROM q, docs_chunks c
          JOIN docs_documents d ON d.id = c.document_id AND d.status = 'ready'
         WHERE c.search @@ q.candidates
         ORDER BY ts_rank('{0.1, 0.2, 0.4, 1.0}', c.search, q.candidates, 1 | 32) DESC, c.id
         LIMIT 60
    ), scored AS (
        SELECT p.id AS chunk_id, p.document_id,
               CASE WHEN p.search @@ q.strict THEN 2 ELSE 0 END
               + ts_rank_cd('{0.1, 0.2, 0.4, 1.0}', p.search, q.relaxed, 1 | 32)
               + (SELECT sum(t.w) FROM unnest(q.terms, q.weights) AS t (term, w) WHERE p.search @@ t.term)
                 / q.total_weight AS score
          FROM q, pre p
    ), best AS (
        SELECT DISTINCT ON (s.document_id) s.chunk_id, s.document_id, s.score
          FROM scored s
         ORDER BY s.document_id, s.score DESC, s.chunk_id
    )
    SELECT b.chunk_id, b.document_id, b.score::float8
      FROM best b
     ORDER BY b.score DESC, b.document_id
     LIMIT max_hits;
END
$fn$;

-- The live definition of docs_full_text(): the one place it is written (see ../README.md).
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
CREATE OR REPLACE FUNCTION docs_full_text(search_text text, max_hits integer)
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

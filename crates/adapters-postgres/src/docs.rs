//! The documentation index on PostgreSQL: weighted `tsvector` chunks under a GIN index, searched
//! with `websearch_to_tsquery` and ranked with `ts_rank_cd`; vectors stored as `real[]`.
//!
//! Raw SQL rather than the query builder: the ranking is one statement whose shape matters more
//! than its types, and `tsvector` functions have no diesel DSL.

mod store;

use async_trait::async_trait;
use diesel::sql_types::{Array, BigInt, Double, Float4, Text};
use diesel::QueryableByName;
use diesel_async::RunQueryDsl;
use domain::docs::{embedding_text, DocsIndex, HitDetails, StoredVector, TextMatch};
use domain::RepoError;

use crate::error::repo;
use crate::pool::Db;

/// [`DocsIndex`] and [`domain::docs::DocsStore`] on PostgreSQL.
#[derive(Debug, Clone)]
pub struct PgDocsIndex {
    db: Db,
}

impl PgDocsIndex {
    /// An index on `db`.
    pub fn new(db: Db) -> Self {
        Self { db }
    }
}

/// Ranks the chunks of ready documents against the query and keeps each document's best chunk.
///
/// Documents and queries use the `english` configuration (stemming, stop words), so "revoking keys"
/// finds "revoke a key". `strict` is the user's text as a web-search query (every term, quoted
/// phrases, `-` to exclude; never a syntax error); `relaxed` is any of its stemmed terms, so a
/// paraphrase that misses one word still finds the page. A chunk's score adds:
/// - 0.3 when it matches the strict query (all terms);
/// - `ts_rank_cd` against the relaxed query with weights title (A) 1.0, heading (B) 0.4, body (C)
///   0.2, normalised by log length and into 0..1 (`1 | 32`);
/// - the share of the query's terms it contains, each weighted by its inverse chunk frequency
///   (`docs_lexemes`), since cover density alone rewards neither matching more of the question nor
///   matching its rare words.
///
/// Candidates are the chunks matching the strict query or any selective term (one found in some but
/// at most a fifth of the chunks; all terms when no term is): a word like "api" alone would select
/// most of the corpus and make every search rank thousands of chunks for no better answer.
const FULL_TEXT_SQL: &str = r"
WITH lex AS (
    SELECT '''' || replace(replace(l.lexeme, '\', '\\'), '''', '''''') || '''' AS quoted,
           ln((st.chunks + 1)::float8 / (coalesce(s.chunks, 0) + 1)) + 1 AS weight,
           coalesce(s.chunks BETWEEN 1 AND st.chunks * 0.2, false) AS selective
      FROM unnest(tsvector_to_array(to_tsvector('english', $1))) AS l (lexeme)
     CROSS JOIN docs_index_state st
      LEFT JOIN docs_lexemes s ON s.lexeme = l.lexeme
), q AS (
    SELECT websearch_to_tsquery('english', $1) AS strict,
           coalesce((SELECT string_agg(quoted, ' | ') FROM lex), '')::tsquery AS relaxed,
           coalesce((SELECT string_agg(quoted, ' | ') FROM lex WHERE selective),
                    (SELECT string_agg(quoted, ' | ') FROM lex), '')::tsquery AS candidates,
           coalesce((SELECT array_agg(quoted::tsquery) FROM lex), '{}') AS terms,
           coalesce((SELECT array_agg(weight) FROM lex), '{}') AS weights,
           coalesce((SELECT sum(weight) FROM lex), 1) AS total_weight
), scored AS (
    SELECT c.id AS chunk_id, c.document_id,
           CASE WHEN c.search @@ q.strict THEN 0.3 ELSE 0 END
           + ts_rank_cd('{0.1, 0.2, 0.4, 1.0}', c.search, q.relaxed, 1 | 32)
           + (SELECT sum(w) FROM unnest(q.terms, q.weights) AS t (term, w) WHERE c.search @@ t.term) / q.total_weight
               AS score
      FROM q, docs_chunks c
      JOIN docs_documents d ON d.id = c.document_id AND d.status = 'ready'
     WHERE c.search @@ q.strict OR c.search @@ q.candidates
), best AS (
    SELECT DISTINCT ON (document_id) chunk_id, document_id, score
      FROM scored
     ORDER BY document_id, score DESC, chunk_id
)
SELECT chunk_id, document_id, score::float8 AS score FROM best ORDER BY score DESC, document_id LIMIT $2
";

/// `ts_headline` for the returned chunks only (it re-parses the text, so it is the costly part),
/// highlighting any query term. Markdown emphasis is removed first so `**` marks only matches.
const HIT_DETAILS_SQL: &str = r#"
WITH q AS (
    SELECT coalesce(string_agg('''' || replace(replace(lexeme, '\', '\\'), '''', '''''') || '''', ' | '), '')
               AS relaxed
      FROM unnest(tsvector_to_array(to_tsvector('english', $1))) AS lexeme
)
SELECT c.id AS chunk_id, d.slug, d.title, d.category,
       regexp_replace(
           ts_headline('english', replace(c.body, '**', ''), q.relaxed::tsquery,
                       'StartSel=**, StopSel=**, MinWords=12, MaxWords=40, MaxFragments=2, FragmentDelimiter="… "'),
           '\s+', ' ', 'g') AS snippet
  FROM q, docs_chunks c
  JOIN docs_documents d ON d.id = c.document_id
 WHERE c.id = ANY($2)
"#;

#[derive(QueryableByName)]
struct MatchRow {
    #[diesel(sql_type = BigInt)]
    chunk_id: i64,
    #[diesel(sql_type = BigInt)]
    document_id: i64,
    #[diesel(sql_type = Double)]
    score: f64,
}

#[derive(QueryableByName)]
struct DetailsRow {
    #[diesel(sql_type = BigInt)]
    chunk_id: i64,
    #[diesel(sql_type = Text)]
    slug: String,
    #[diesel(sql_type = Text)]
    title: String,
    #[diesel(sql_type = Text)]
    category: String,
    #[diesel(sql_type = Text)]
    snippet: String,
}

#[derive(QueryableByName)]
struct GenerationRow {
    #[diesel(sql_type = BigInt)]
    generation: i64,
}

#[derive(QueryableByName)]
struct VectorRow {
    #[diesel(sql_type = BigInt)]
    chunk_id: i64,
    #[diesel(sql_type = BigInt)]
    document_id: i64,
    #[diesel(sql_type = Text)]
    title: String,
    #[diesel(sql_type = Text)]
    heading: String,
    #[diesel(sql_type = Text)]
    body: String,
    #[diesel(sql_type = Array<Float4>)]
    embedding: Vec<f32>,
}

#[async_trait]
impl DocsIndex for PgDocsIndex {
    async fn full_text(&self, query: &str, n: usize) -> Result<Vec<TextMatch>, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        let rows: Vec<MatchRow> = diesel::sql_query(FULL_TEXT_SQL)
            .bind::<Text, _>(query)
            .bind::<BigInt, _>(i64::try_from(n).unwrap_or(i64::MAX))
            .load(&mut conn)
            .await
            .map_err(repo)?;
        Ok(rows
            .into_iter()
            .map(|r| TextMatch { chunk_id: r.chunk_id, document_id: r.document_id, score: r.score })
            .collect())
    }

    async fn hit_details(&self, query: &str, chunk_ids: &[i64]) -> Result<Vec<HitDetails>, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        let rows: Vec<DetailsRow> = diesel::sql_query(HIT_DETAILS_SQL)
            .bind::<Text, _>(query)
            .bind::<Array<BigInt>, _>(chunk_ids)
            .load(&mut conn)
            .await
            .map_err(repo)?;
        Ok(rows
            .into_iter()
            .map(|r| HitDetails {
                chunk_id: r.chunk_id,
                slug: r.slug,
                title: r.title,
                category: r.category,
                snippet: r.snippet.trim().to_owned(),
            })
            .collect())
    }

    async fn generation(&self) -> Result<i64, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        let row: GenerationRow =
            diesel::sql_query("SELECT generation FROM docs_index_state").get_result(&mut conn).await.map_err(repo)?;
        Ok(row.generation)
    }

    async fn vectors(&self, model: &str) -> Result<Vec<StoredVector>, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        let rows: Vec<VectorRow> = diesel::sql_query(
            "SELECT c.id AS chunk_id, c.document_id, d.title, c.heading, c.body, c.embedding
               FROM docs_chunks c JOIN docs_documents d ON d.id = c.document_id AND d.status = 'ready'
              WHERE c.embedding_model = $1 ORDER BY c.id",
        )
        .bind::<Text, _>(model)
        .load(&mut conn)
        .await
        .map_err(repo)?;
        Ok(rows
            .into_iter()
            .map(|r| StoredVector {
                chunk_id: r.chunk_id,
                document_id: r.document_id,
                text: embedding_text(&r.title, &r.heading, &r.body),
                vector: r.embedding,
            })
            .collect())
    }
}

//! The documentation index on PostgreSQL: weighted `tsvector` chunks under a GIN index, searched
//! with `websearch_to_tsquery` and ranked with `ts_rank_cd`; vectors stored as `real[]`.
//!
//! Raw SQL rather than the query builder: `tsvector` functions have no diesel DSL, and the ranking
//! is a database function whose shape matters more than its types.

mod store;

use async_trait::async_trait;
use diesel::sql_types::{Array, BigInt, Double, Float4, Integer, Text};
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

/// The ranking lives in the `docs_full_text` function (migration `2026-11-20-000005_docs`, where
/// its comment explains the score): strict web-search matches first, then a relaxed any-term fill,
/// `ts_rank_cd` plus rare-term coverage, one chunk per ready document. A PL/pgSQL function so its
/// plan is cached per connection.
const FULL_TEXT_SQL: &str = "SELECT chunk_id, document_id, score FROM docs_full_text($1, $2)";

/// `ts_headline` for the returned chunks only (it re-parses the text, so it is the costly part),
/// highlighting any query term. Markdown emphasis is removed first so `**` marks only matches.
const HIT_DETAILS_SQL: &str = r#"
WITH q AS (
    SELECT coalesce(string_agg('''' || replace(replace(lexeme, '\', '\\'), '''', '''''') || '''', ' | '), '')
               AS relaxed
      FROM unnest(tsvector_to_array(to_tsvector('english', $1))) AS lexeme
)
SELECT c.id AS chunk_id, d.slug, d.title, d.category, c.heading,
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
    heading: String,
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
            .bind::<Integer, _>(i32::try_from(n).unwrap_or(i32::MAX))
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
                heading: r.heading,
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

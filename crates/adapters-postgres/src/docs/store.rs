//! The ingest's side of the index: document lifecycle and atomic chunk replacement.

use async_trait::async_trait;
use diesel::sql_types::{Array, BigInt, Float4, Integer, Nullable, Text};
use diesel::QueryableByName;
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use domain::docs::{DocStatus, DocsStore, NewChunk, PageMeta, StoredDocument};
use domain::RepoError;

use super::PgDocsIndex;
use crate::error::repo;

#[derive(QueryableByName)]
struct DocumentRow {
    #[diesel(sql_type = Text)]
    slug: String,
    #[diesel(sql_type = Text)]
    content_hash: String,
    #[diesel(sql_type = Text)]
    status: String,
    #[diesel(sql_type = Nullable<Text>)]
    embedding_model: Option<String>,
}

#[derive(QueryableByName)]
struct IdRow {
    #[diesel(sql_type = BigInt)]
    id: i64,
}

/// The weighted vector of a chunk: title A, heading B, body C.
const INSERT_CHUNK_SQL: &str = "
INSERT INTO docs_chunks (document_id, ordinal, heading, body, search, embedding, embedding_model, embedding_dim)
VALUES ($1, $2, $3, $4,
        setweight(to_tsvector('english', $5), 'A') || setweight(to_tsvector('english', $3), 'B')
            || setweight(to_tsvector('english', $4), 'C'),
        $6, $7, $8)";

/// The lexeme frequencies the ranking weighs terms by, and the planner's statistics: a fresh or
/// rewritten table has none, and the planner then prefers nested loops to the GIN index.
///
/// Ingests may run at once (every `wms serve` at start, `wms docs ingest`): two refreshes
/// interleaving `DELETE` and `INSERT` failed on `docs_lexemes_pkey` (the second `DELETE` does not
/// see rows the first inserted after its snapshot). A transaction-scoped advisory lock (safe
/// behind PgBouncer's transaction pooling) makes refreshes take turns, each starting from what
/// the last committed; `ON CONFLICT` keeps a refresh from an older binary, which takes no lock,
/// from failing either.
pub(crate) const REFRESH_STATISTICS_SQL: &[&str] = &[
    "SELECT pg_advisory_xact_lock(2004318210, 1)",
    "DELETE FROM docs_lexemes",
    "INSERT INTO docs_lexemes (lexeme, chunks)
     SELECT word, ndoc FROM ts_stat('SELECT c.search FROM docs_chunks c
                                       JOIN docs_documents d ON d.id = c.document_id AND d.status = ''ready''')
     ON CONFLICT (lexeme) DO UPDATE SET chunks = EXCLUDED.chunks",
    "UPDATE docs_index_state SET chunks = (SELECT count(*) FROM docs_chunks c
                                             JOIN docs_documents d ON d.id = c.document_id AND d.status = 'ready')",
    "ANALYZE docs_documents, docs_chunks, docs_lexemes",
];

/// Tells running servers that the index changed, so they reload their vectors.
async fn bump_generation(conn: &mut AsyncPgConnection) -> Result<(), diesel::result::Error> {
    diesel::sql_query("UPDATE docs_index_state SET generation = generation + 1, changed_at = now()")
        .execute(conn)
        .await
        .map(|_| ())
}

#[async_trait]
impl DocsStore for PgDocsIndex {
    async fn documents(&self) -> Result<Vec<StoredDocument>, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        let rows: Vec<DocumentRow> =
            diesel::sql_query("SELECT slug, content_hash, status, embedding_model FROM docs_documents")
                .load(&mut conn)
                .await
                .map_err(repo)?;
        rows.into_iter()
            .map(|r| {
                let status =
                    DocStatus::parse(&r.status).ok_or_else(|| repo(anyhow::anyhow!("status `{}`", r.status)))?;
                Ok(StoredDocument {
                    slug: r.slug,
                    content_hash: r.content_hash,
                    status,
                    embedding_model: r.embedding_model,
                })
            })
            .collect()
    }

    async fn insert_pending(&self, meta: &PageMeta, source_path: &str, content_hash: &str) -> Result<(), RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        diesel::sql_query(
            "INSERT INTO docs_documents (slug, title, category, source_path, content_hash, status)
             VALUES ($1, $2, $3, $4, $5, 'pending') ON CONFLICT (slug) DO NOTHING",
        )
        .bind::<Text, _>(&meta.slug)
        .bind::<Text, _>(&meta.title)
        .bind::<Text, _>(&meta.category)
        .bind::<Text, _>(source_path)
        .bind::<Text, _>(content_hash)
        .execute(&mut conn)
        .await
        .map_err(repo)?;
        Ok(())
    }

    async fn replace_chunks(
        &self,
        meta: &PageMeta,
        source_path: &str,
        content_hash: &str,
        embedding_model: Option<String>,
        chunks: &[NewChunk],
    ) -> Result<(), RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        conn.transaction::<_, diesel::result::Error, _>(|conn| {
            async move {
                let doc: IdRow = diesel::sql_query(
                    "INSERT INTO docs_documents
                         (slug, title, category, source_path, content_hash, status, failure_reason, embedding_model)
                     VALUES ($1, $2, $3, $4, $5, 'ready', NULL, $6)
                     ON CONFLICT (slug) DO UPDATE SET title = $2, category = $3, source_path = $4,
                         content_hash = $5, status = 'ready', failure_reason = NULL, embedding_model = $6,
                         updated_at = now()
                     RETURNING id",
                )
                .bind::<Text, _>(&meta.slug)
                .bind::<Text, _>(&meta.title)
                .bind::<Text, _>(&meta.category)
                .bind::<Text, _>(source_path)
                .bind::<Text, _>(content_hash)
                .bind::<Nullable<Text>, _>(embedding_model.as_deref())
                .get_result(conn)
                .await?;
                diesel::sql_query("DELETE FROM docs_chunks WHERE document_id = $1")
                    .bind::<BigInt, _>(doc.id)
                    .execute(conn)
                    .await?;
                for (ordinal, c) in chunks.iter().enumerate() {
                    let model = c.vector.as_ref().and(embedding_model.as_deref());
                    let dimension = c.vector.as_ref().map(|v| i32::try_from(v.len()).unwrap_or(i32::MAX));
                    diesel::sql_query(INSERT_CHUNK_SQL)
                        .bind::<BigInt, _>(doc.id)
                        .bind::<Integer, _>(i32::try_from(ordinal).unwrap_or(i32::MAX))
                        .bind::<Text, _>(&c.chunk.heading)
                        .bind::<Text, _>(&c.chunk.body)
                        .bind::<Text, _>(&meta.title)
                        .bind::<Nullable<Array<Float4>>, _>(c.vector.as_ref())
                        .bind::<Nullable<Text>, _>(model)
                        .bind::<Nullable<Integer>, _>(dimension)
                        .execute(conn)
                        .await?;
                }
                bump_generation(conn).await
            }
            .scope_boxed()
        })
        .await
        .map_err(repo)
    }

    async fn mark_failed(
        &self,
        slug: &str,
        source_path: &str,
        content_hash: &str,
        reason: &str,
    ) -> Result<(), RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        conn.transaction::<_, diesel::result::Error, _>(|conn| {
            async move {
                // A failed page is not searched, so its chunks would only be dead weight.
                diesel::sql_query(
                    "DELETE FROM docs_chunks WHERE document_id = (SELECT id FROM docs_documents WHERE slug = $1)",
                )
                .bind::<Text, _>(slug)
                .execute(conn)
                .await?;
                diesel::sql_query(
                    "INSERT INTO docs_documents (slug, title, category, source_path, content_hash, status, failure_reason)
                     VALUES ($1, $1, 'unknown', $2, $3, 'failed', $4)
                     ON CONFLICT (slug) DO UPDATE SET source_path = $2, content_hash = $3, status = 'failed',
                         failure_reason = $4, embedding_model = NULL, updated_at = now()",
                )
                .bind::<Text, _>(slug)
                .bind::<Text, _>(source_path)
                .bind::<Text, _>(content_hash)
                .bind::<Text, _>(reason)
                .execute(conn)
                .await?;
                bump_generation(conn).await
            }
            .scope_boxed()
        })
        .await
        .map_err(repo)
    }

    async fn remove_except(&self, keep: &[String]) -> Result<u64, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        conn.transaction::<_, diesel::result::Error, _>(|conn| {
            async move {
                let n = diesel::sql_query("DELETE FROM docs_documents WHERE slug <> ALL($1)")
                    .bind::<Array<Text>, _>(keep)
                    .execute(conn)
                    .await?;
                if n > 0 {
                    bump_generation(conn).await?;
                }
                Ok(n as u64)
            }
            .scope_boxed()
        })
        .await
        .map_err(repo)
    }

    async fn refresh_statistics(&self) -> Result<(), RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        conn.transaction::<_, diesel::result::Error, _>(|conn| {
            async move {
                for statement in REFRESH_STATISTICS_SQL {
                    diesel::sql_query(*statement).execute(conn).await?;
                }
                Ok(())
            }
            .scope_boxed()
        })
        .await
        .map_err(repo)
    }
}

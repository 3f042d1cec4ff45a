//! Ports of the documentation area: the search the assistant calls, the index behind it, the
//! store the ingest writes, and the embeddings and rerank providers.

use async_trait::async_trait;

use super::model::{Chunk, DocStatus, PageMeta, SearchResult};
use crate::common::error::RepoError;

/// Why a documentation search failed. A malformed query is never an error: it finds nothing.
#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    /// `limit` is outside 1..=8.
    #[error("limit must be between 1 and 8, got {0}")]
    InvalidLimit(u8),
    /// The database failed.
    #[error(transparent)]
    Unknown(#[from] RepoError),
}

/// `search_product_docs`: what the assistant's tool registry calls (`docs/search.md`).
///
/// Hybrid (vector + full-text, fused and reranked) when an embeddings provider is configured and
/// `CO_ADMIN_RAG_HYBRID` is not `0`; full-text otherwise or when a provider fails, and the result
/// says which mode answered. Only `ready` documents are searched.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait DocsSearch: Send + Sync {
    /// The best pages for `query`, at most `limit` (1..=8; the tool's default is
    /// [`super::DEFAULT_LIMIT`]), one hit per page. Any text is a valid query: quotes, operators,
    /// emoji or nothing at all give hits or none, never an error.
    ///
    /// # Errors
    /// [`SearchError::InvalidLimit`] outside 1..=8; [`SearchError::Unknown`] when the database fails.
    async fn search(&self, query: &str, limit: u8) -> Result<SearchResult, SearchError>;

    /// [`DocsSearch::search`] with the full-text index alone: never an embeddings or rerank call,
    /// whatever is configured. For visitors without credentials (the public `/docs?q=`), whose
    /// searches must cost no paid provider anything.
    ///
    /// # Errors
    /// As [`DocsSearch::search`].
    async fn search_full_text(&self, query: &str, limit: u8) -> Result<SearchResult, SearchError>;
}

/// A chunk that matched the full-text query; at most one per document.
#[derive(Debug, Clone, PartialEq)]
pub struct TextMatch {
    /// The best chunk of its document.
    pub chunk_id: i64,
    /// Its document.
    pub document_id: i64,
    /// `ts_rank_cd` of the chunk, normalised to 0..1.
    pub score: f64,
}

/// A hit's page and snippet, looked up for the chunks that are returned.
#[derive(Debug, Clone, PartialEq)]
pub struct HitDetails {
    /// The chunk.
    pub chunk_id: i64,
    /// Its page's slug.
    pub slug: String,
    /// Its page's title.
    pub title: String,
    /// Its page's category.
    pub category: String,
    /// The chunk's section heading as indexed, for the hit's link to its section.
    pub heading: String,
    /// `ts_headline` of the chunk for the query.
    pub snippet: String,
}

/// A chunk with its vector, as held in memory for exact cosine search.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredVector {
    /// The chunk.
    pub chunk_id: i64,
    /// Its document.
    pub document_id: i64,
    /// Title, heading and body, as sent to the rerank provider.
    pub text: String,
    /// The embedding.
    pub vector: Vec<f32>,
}

/// Read side of the index: full-text search over `ready` documents and the stored vectors.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait DocsIndex: Send + Sync {
    /// The best chunk of each of the best `n` ready documents for `query`: documents matching
    /// every term first (websearch syntax), then documents matching any term.
    ///
    /// # Errors
    /// Only infrastructure failures; no query text is a syntax error.
    async fn full_text(&self, query: &str, n: usize) -> Result<Vec<TextMatch>, RepoError>;

    /// Page details and highlighted snippets of these chunks, for the hits being returned only.
    ///
    /// # Errors
    /// Only infrastructure failures.
    async fn hit_details(&self, query: &str, chunk_ids: &[i64]) -> Result<Vec<HitDetails>, RepoError>;

    /// A number that changes whenever an ingest changes anything.
    ///
    /// # Errors
    /// Only infrastructure failures.
    async fn generation(&self) -> Result<i64, RepoError>;

    /// Every vector of a ready document made by `model`.
    ///
    /// # Errors
    /// Only infrastructure failures.
    async fn vectors(&self, model: &str) -> Result<Vec<StoredVector>, RepoError>;
}

/// What the store knows of a page from an earlier ingest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredDocument {
    /// The page's slug.
    pub slug: String,
    /// SHA-256 of the bytes last ingested.
    pub content_hash: String,
    /// Ingest status.
    pub status: DocStatus,
    /// The model of its chunk vectors, if any.
    pub embedding_model: Option<String>,
}

/// A chunk to store, with its vector when an embeddings provider made one.
#[derive(Debug, Clone, PartialEq)]
pub struct NewChunk {
    /// Heading and text.
    pub chunk: Chunk,
    /// The embedding.
    pub vector: Option<Vec<f32>>,
}

/// Write side of the index, used by the ingest.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait DocsStore: Send + Sync {
    /// Every stored document.
    ///
    /// # Errors
    /// Only infrastructure failures.
    async fn documents(&self) -> Result<Vec<StoredDocument>, RepoError>;

    /// Records a new page as `pending` before its chunks are built.
    ///
    /// # Errors
    /// Only infrastructure failures.
    async fn insert_pending(&self, meta: &PageMeta, source_path: &str, content_hash: &str) -> Result<(), RepoError>;

    /// In one transaction: replaces the page's chunks, updates its metadata and hash, and marks it
    /// `ready`. Readers see the old chunks or the new ones, never a mix.
    ///
    /// # Errors
    /// Only infrastructure failures (the transaction is rolled back).
    async fn replace_chunks(
        &self,
        meta: &PageMeta,
        source_path: &str,
        content_hash: &str,
        embedding_model: Option<String>,
        chunks: &[NewChunk],
    ) -> Result<(), RepoError>;

    /// Marks the page `failed` with `reason` (creating its row if needed) and drops its chunks.
    ///
    /// # Errors
    /// Only infrastructure failures.
    async fn mark_failed(
        &self,
        slug: &str,
        source_path: &str,
        content_hash: &str,
        reason: &str,
    ) -> Result<(), RepoError>;

    /// Deletes every document whose slug is not in `keep`; returns how many.
    ///
    /// # Errors
    /// Only infrastructure failures.
    async fn remove_except(&self, keep: &[String]) -> Result<u64, RepoError>;

    /// Refreshes the query planner's statistics after an ingest changed the index.
    ///
    /// # Errors
    /// Only infrastructure failures.
    async fn refresh_statistics(&self) -> Result<(), RepoError>;
}

/// Why a provider call failed; every variant makes the search fall back to full-text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProviderError {
    /// No connection could be made.
    #[error("the provider is unreachable: {0}")]
    Unreachable(String),
    /// No answer within the time limit.
    #[error("the provider did not answer within {0} ms")]
    Timeout(u64),
    /// A non-2xx status.
    #[error("the provider answered HTTP {0}")]
    Status(u16),
    /// A 2xx answer that is not what the API promises (bad JSON, missing items, wrong dimension).
    #[error("the provider's answer is unusable: {0}")]
    InvalidResponse(String),
}

/// An embeddings provider (OpenAI-compatible `/v1/embeddings`).
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait Embedder: Send + Sync {
    /// The model name, stored beside every vector it makes.
    fn model(&self) -> String;

    /// One vector per text, in order.
    ///
    /// # Errors
    /// A [`ProviderError`]; the caller falls back to full-text.
    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, ProviderError>;
}

/// A rerank provider (Cohere/Jina-style `/rerank`).
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait Reranker: Send + Sync {
    /// `(index into documents, relevance)` pairs, most relevant first.
    ///
    /// # Errors
    /// A [`ProviderError`]; the caller falls back to full-text.
    async fn rerank(&self, query: &str, documents: &[String]) -> Result<Vec<(usize, f64)>, ProviderError>;
}

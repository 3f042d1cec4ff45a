//! Builds the documentation search and ingest from settings, and ingests a directory of pages.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use adapters_outbound::embeddings::HttpEmbedder;
use adapters_outbound::rerank::HttpReranker;
use adapters_postgres::docs::PgDocsIndex;
use adapters_postgres::Db;
use anyhow::Context;
use domain::docs::{DocsLibrary, DocsSearchService, Embedder, HybridProviders, IngestReport, Reranker, SourcePage};

use crate::config::Settings;

/// The default documentation directory, relative to the working directory.
pub const DEFAULT_DOCS_DIR: &str = "docs/product";

/// How long the ingest waits for the embeddings of one page's chunks: a batch, not one query, so
/// longer than a search's limit.
const INGEST_EMBED_TIMEOUT: Duration = Duration::from_secs(60);

/// The embeddings provider of the settings, if one is configured.
pub fn embedder(settings: &Settings, timeout: Duration) -> Option<HttpEmbedder> {
    let e = &settings.embeddings;
    let url = e.url.as_deref().filter(|u| !u.trim().is_empty())?;
    Some(HttpEmbedder::new(url, e.model.as_deref().unwrap_or_default(), e.api_key.as_deref(), timeout))
}

/// The rerank provider of the settings, if one is configured.
pub fn reranker(settings: &Settings) -> Option<HttpReranker> {
    let r = &settings.rerank;
    let url = r.url.as_deref().filter(|u| !u.trim().is_empty())?;
    Some(HttpReranker::new(url, r.model.as_deref(), r.api_key.as_deref(), Duration::from_millis(r.timeout_ms)))
}

/// Hybrid when an embeddings provider is configured and `CO_ADMIN_RAG_HYBRID` is not `0`, else
/// full-text; hybrid falls back to full-text when a provider fails (`docs/search.md`, "Hybrid search").
pub fn search_service(settings: &Settings, db: &Db) -> DocsSearchService {
    let index = Arc::new(PgDocsIndex::new(db.clone()));
    let hybrid = settings.co_admin.rag_hybrid;
    match embedder(settings, Duration::from_millis(settings.embeddings.timeout_ms)).filter(|_| hybrid) {
        Some(embedder) => {
            let reranker = reranker(settings).map(|r| Arc::new(r) as Arc<dyn Reranker>);
            DocsSearchService::hybrid(index, HybridProviders { embedder: Arc::new(embedder), reranker })
        }
        None => DocsSearchService::full_text(index),
    }
}

/// Reads every `*.md` file of `dir` (sorted, not recursive) and ingests them, with vectors when an
/// embeddings provider is configured (whatever the hybrid switch says, so turning it on later
/// needs no new ingest).
///
/// # Errors
/// When the directory cannot be read or holds no page, or the database fails.
/// The product documentation compiled into the binary, so `wms serve` can answer
/// `search_product_docs` wherever it runs, without the repository beside it.
static EMBEDDED_DOCS: include_dir::Dir<'static> = include_dir::include_dir!("$CARGO_MANIFEST_DIR/../../docs/product");

/// The embedded pages, sorted by path.
pub fn embedded_pages() -> Vec<SourcePage> {
    let mut pages: Vec<SourcePage> = EMBEDDED_DOCS
        .files()
        .filter(|f| f.path().extension().is_some_and(|x| x == "md"))
        .map(|f| SourcePage { path: format!("docs/product/{}", f.path().display()), bytes: f.contents().to_vec() })
        .collect();
    pages.sort_by(|a, b| a.path.cmp(&b.path));
    pages
}

/// The embedded pages to read (`/docs`, MCP resources): the pages `wms serve` ingests, parsed once.
pub fn library() -> Arc<DocsLibrary> {
    static LIBRARY: std::sync::LazyLock<Arc<DocsLibrary>> = std::sync::LazyLock::new(|| {
        let (library, failed) = DocsLibrary::from_sources(&embedded_pages());
        for (path, reason) in &failed {
            tracing::warn!(path, %reason, "documentation page not readable");
        }
        Arc::new(library)
    });
    LIBRARY.clone()
}

/// Ingests the embedded documentation (unchanged pages are skipped by their content hash), under
/// an advisory lock so that instances starting together do not ingest the same pages at once.
///
/// The lock is transaction-scoped, held by a transaction that stays open on a connection of its
/// own for the ingest (which writes on other connections) and released by its end, however the
/// ingest ends: a session lock would outlive its transaction on a PgBouncer server connection in
/// transaction pooling, which hands that connection to other clients (docs/contract.md, "Operations
/// at scale").
///
/// # Errors
/// On database failure.
pub async fn ingest_embedded(settings: &Settings, db: &Db) -> anyhow::Result<IngestReport> {
    use diesel_async::scoped_futures::ScopedFutureExt;
    use diesel_async::{AsyncConnection, RunQueryDsl};
    let pages = embedded_pages();
    let store = PgDocsIndex::new(db.clone());
    let embedder = embedder(settings, INGEST_EMBED_TIMEOUT);
    let mut lock = db.conn().await?;
    let result = lock
        .transaction::<_, diesel::result::Error, _>(|c| {
            async move {
                diesel::sql_query("SELECT pg_advisory_xact_lock(727275)").execute(c).await?;
                Ok(domain::docs::ingest(&store, embedder.as_ref().map(|e| e as &dyn Embedder), &pages).await)
            }
            .scope_boxed()
        })
        .await?;
    Ok(result?)
}

pub async fn ingest_dir(settings: &Settings, db: &Db, dir: &Path) -> anyhow::Result<IngestReport> {
    let mut paths: Vec<_> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot read the documentation directory {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "md") && p.is_file())
        .collect();
    paths.sort();
    if paths.is_empty() {
        anyhow::bail!("no *.md page in {}", dir.display());
    }
    let pages = paths
        .iter()
        .map(|p| {
            let bytes = std::fs::read(p).with_context(|| format!("cannot read {}", p.display()))?;
            Ok(SourcePage { path: p.display().to_string(), bytes })
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let store = PgDocsIndex::new(db.clone());
    let embedder = embedder(settings, INGEST_EMBED_TIMEOUT);
    let bar = crate::progress::bar(pages.len() as u64, "pages");
    bar.set_message("docs");
    let done = |n: usize| bar.set_position(n as u64);
    let report =
        domain::docs::ingest_observed(&store, embedder.as_ref().map(|e| e as &dyn Embedder), &pages, &done).await;
    bar.finish_and_clear();
    let report = report?;
    for (path, reason) in &report.failed {
        tracing::warn!(path, reason, "documentation page not ingested");
    }
    for e in &report.embedding_errors {
        tracing::warn!(error = %e, "page ingested without vectors; full-text search still finds it");
    }
    Ok(report)
}

/// One line about an ingest, for people.
pub fn summary(report: &IngestReport) -> String {
    format!(
        "docs: {} added, {} updated, {} unchanged, {} failed, {} removed{}",
        report.added.len(),
        report.updated.len(),
        report.unchanged,
        report.failed.len(),
        report.removed,
        if report.embedding_errors.is_empty() {
            String::new()
        } else {
            format!(", {} without vectors", report.embedding_errors.len())
        }
    )
}

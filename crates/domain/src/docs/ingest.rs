//! `wms docs ingest`: pages → chunks (and vectors) in the index, skipping unchanged pages.

use std::collections::{HashMap, HashSet};

use super::model::{content_hash, is_valid_slug, parse_page, DocStatus, ParsedPage};
use super::ports::{DocsStore, Embedder, NewChunk, StoredDocument};
use crate::common::error::RepoError;

/// Chunks per embeddings request.
const EMBED_BATCH: usize = 64;

/// One markdown file of the documentation directory.
#[derive(Debug, Clone)]
pub struct SourcePage {
    /// Where it was read, for messages (`docs/product/plans.md`).
    pub path: String,
    /// Its bytes.
    pub bytes: Vec<u8>,
}

/// What an ingest did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IngestReport {
    /// Slugs of new pages, now ready.
    pub added: Vec<String>,
    /// Slugs of changed pages whose chunks were replaced.
    pub updated: Vec<String>,
    /// How many pages were unchanged and skipped.
    pub unchanged: usize,
    /// `(path, reason)` of pages that could not be ingested.
    pub failed: Vec<(String, String)>,
    /// How many stored documents had no page any more and were removed.
    pub removed: u64,
    /// Why vectors could not be made, when an embeddings provider is configured but failed;
    /// those pages are still searchable by full-text and get vectors on the next ingest.
    pub embedding_errors: Vec<String>,
}

impl IngestReport {
    /// Whether anything in the index changed.
    pub fn changed(&self) -> bool {
        !self.added.is_empty() || !self.updated.is_empty() || !self.failed.is_empty() || self.removed > 0
    }
}

/// Ingests `pages` as the whole documentation set: new and changed pages are chunked (and
/// embedded when `embedder` is given) and become `ready`; unchanged pages are skipped by content
/// hash; pages that cannot be parsed become `failed` with the reason; documents whose page is gone
/// are removed (unless `pages` is empty, which is more likely a wrong directory than no docs).
///
/// # Errors
/// Only infrastructure failures of the store.
pub async fn ingest(
    store: &dyn DocsStore,
    embedder: Option<&dyn Embedder>,
    pages: &[SourcePage],
) -> Result<IngestReport, RepoError> {
    ingest_observed(store, embedder, pages, &|_| {}).await
}

/// [`ingest`], telling `pages_done` how many pages have been handled after each one (for a
/// progress display: embedding a page can take seconds).
///
/// # Errors
/// As [`ingest`].
pub async fn ingest_observed(
    store: &dyn DocsStore,
    embedder: Option<&dyn Embedder>,
    pages: &[SourcePage],
    pages_done: &(dyn Fn(usize) + Send + Sync),
) -> Result<IngestReport, RepoError> {
    let stored: HashMap<String, StoredDocument> =
        store.documents().await?.into_iter().map(|d| (d.slug.clone(), d)).collect();
    let model = embedder.map(Embedder::model);
    let mut report = IngestReport::default();
    let mut seen: HashSet<String> = HashSet::new();
    for (done, page) in pages.iter().enumerate() {
        pages_done(done);
        let hash = content_hash(&page.bytes);
        let parsed = match parse_page(&page.bytes) {
            Ok(p) => p,
            Err(e) => {
                let stem = page.path.rsplit('/').next().unwrap_or(&page.path).trim_end_matches(".md").to_owned();
                if is_valid_slug(&stem) && seen.insert(stem.clone()) {
                    store.mark_failed(&stem, &page.path, &hash, &e.to_string()).await?;
                }
                report.failed.push((page.path.clone(), e.to_string()));
                continue;
            }
        };
        let slug = parsed.meta.slug.clone();
        if !seen.insert(slug.clone()) {
            report.failed.push((page.path.clone(), format!("the slug `{slug}` is used by another page")));
            continue;
        }
        let previous = stored.get(&slug);
        let unchanged = previous.is_some_and(|d| {
            d.content_hash == hash && d.status == DocStatus::Ready && (model.is_none() || d.embedding_model == model)
        });
        if unchanged {
            report.unchanged += 1;
            continue;
        }
        if previous.is_none() {
            store.insert_pending(&parsed.meta, &page.path, &hash).await?;
        }
        let (chunks, embedded_with) = embed_chunks(embedder, &parsed, &mut report.embedding_errors).await;
        store.replace_chunks(&parsed.meta, &page.path, &hash, embedded_with, &chunks).await?;
        if previous.is_some() {
            report.updated.push(slug);
        } else {
            report.added.push(slug);
        }
    }
    pages_done(pages.len());
    if !pages.is_empty() {
        let keep: Vec<String> = seen.into_iter().collect();
        report.removed = store.remove_except(&keep).await?;
    }
    if report.changed() {
        store.refresh_statistics().await?;
    }
    Ok(report)
}

/// The page's chunks with vectors when the provider made them all, else without any.
async fn embed_chunks(
    embedder: Option<&dyn Embedder>,
    page: &ParsedPage,
    errors: &mut Vec<String>,
) -> (Vec<NewChunk>, Option<String>) {
    let without = || page.chunks.iter().map(|c| NewChunk { chunk: c.clone(), vector: None }).collect();
    let Some(embedder) = embedder else { return (without(), None) };
    let texts: Vec<String> =
        page.chunks.iter().map(|c| embedding_text(&page.meta.title, &c.heading, &c.body)).collect();
    let mut vectors: Vec<Vec<f32>> = Vec::with_capacity(texts.len());
    for batch in texts.chunks(EMBED_BATCH) {
        match embedder.embed(batch).await {
            Ok(v) if v.len() == batch.len() => vectors.extend(v),
            Ok(v) => {
                errors.push(format!("{}: {} vectors for {} chunks", page.meta.slug, v.len(), batch.len()));
                return (without(), None);
            }
            Err(e) => {
                errors.push(format!("{}: {e}", page.meta.slug));
                return (without(), None);
            }
        }
    }
    let chunks = page.chunks.iter().zip(vectors).map(|(c, v)| NewChunk { chunk: c.clone(), vector: Some(v) }).collect();
    (chunks, Some(embedder.model()))
}

/// What is embedded (and shown to the rerank provider) for a chunk: its context, then its text.
pub fn embedding_text(title: &str, heading: &str, body: &str) -> String {
    if heading == title {
        format!("{title}\n{body}")
    } else {
        format!("{title}: {heading}\n{body}")
    }
}

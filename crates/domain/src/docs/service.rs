//! `search_product_docs`: full-text, or hybrid (vector + full-text fused by RRF, then reranked)
//! with a fall back to full-text whenever a provider fails (`docs/search.md`, "Hybrid search").

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use async_trait::async_trait;

use super::model::{SearchHit, SearchMode, SearchResult};
use super::ports::{DocsIndex, DocsSearch, Embedder, ProviderError, Reranker, SearchError, TextMatch};
use super::query::{is_searchable, normalize_query, suggestion_for};
use super::vectors::{reciprocal_rank_fusion, VectorIndex, RRF_K};
use crate::common::error::RepoError;

/// The tool's default `limit` (`docs/search.md`, "The result").
pub const DEFAULT_LIMIT: u8 = 5;
/// The largest `limit`.
pub const MAX_LIMIT: u8 = 8;
/// Documents each engine contributes to fusion: deep enough that a page ranked low by one engine
/// and high by the other still surfaces.
const FUSION_CANDIDATES: usize = 20;
/// Fused documents sent to the rerank provider.
const RERANK_CANDIDATES: usize = 12;
/// Below this cosine similarity a page found only by vectors is noise, not an answer; without it
/// every unanswerable question would "find" its nearest neighbours.
const MIN_VECTOR_ONLY_SIMILARITY: f32 = 0.25;

/// The embeddings provider, and the optional rerank provider, of hybrid search.
#[derive(Clone)]
pub struct HybridProviders {
    /// Makes the query vector.
    pub embedder: Arc<dyn Embedder>,
    /// Orders the fused candidates, when configured.
    pub reranker: Option<Arc<dyn Reranker>>,
}

/// The documentation search behind `search_product_docs`.
pub struct DocsSearchService {
    index: Arc<dyn DocsIndex>,
    hybrid: Option<HybridProviders>,
    /// Chunk vectors of the embeddings model, rebuilt when the ingest generation changes.
    vectors: RwLock<Option<Arc<VectorIndex>>>,
}

impl std::fmt::Debug for DocsSearchService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DocsSearchService").field("mode", &self.configured_mode()).finish_non_exhaustive()
    }
}

/// A page on its way to becoming a hit.
struct Ranked {
    chunk_id: i64,
    score: f64,
}

impl DocsSearchService {
    /// Full-text search alone.
    pub fn full_text(index: Arc<dyn DocsIndex>) -> Self {
        Self { index, hybrid: None, vectors: RwLock::new(None) }
    }

    /// Hybrid search with these providers, falling back to full-text when they fail.
    pub fn hybrid(index: Arc<dyn DocsIndex>, providers: HybridProviders) -> Self {
        Self { index, hybrid: Some(providers), vectors: RwLock::new(None) }
    }

    /// The mode searches use when every provider answers.
    pub fn configured_mode(&self) -> SearchMode {
        if self.hybrid.is_some() {
            SearchMode::Hybrid
        } else {
            SearchMode::FullText
        }
    }

    async fn ranked_hybrid(
        &self,
        providers: &HybridProviders,
        query: &str,
        text: &[TextMatch],
        embedded: Result<Vec<Vec<f32>>, ProviderError>,
        generation: i64,
    ) -> Result<Result<(Vec<Ranked>, bool), String>, RepoError> {
        let query_vector = match embedded {
            Ok(mut v) if v.len() == 1 => v.remove(0),
            Ok(v) => return Ok(Err(format!("embeddings: expected 1 vector, got {}", v.len()))),
            Err(e) => return Ok(Err(format!("embeddings: {e}"))),
        };
        let vectors = self.vectors_at(generation, &providers.embedder.model()).await?;
        if vectors.is_empty() {
            return Ok(Err(format!(
                "no stored vectors of model `{}`: run `wms docs ingest` with the embeddings provider",
                providers.embedder.model()
            )));
        }
        let nearest = match vectors.nearest_documents(&query_vector, FUSION_CANDIDATES) {
            Ok(n) => n,
            Err(e) => return Ok(Err(format!("embeddings: {e}"))),
        };
        let mut chunk_of: HashMap<i64, i64> = text.iter().map(|m| (m.document_id, m.chunk_id)).collect();
        let mut vector_docs: Vec<i64> = Vec::with_capacity(nearest.len());
        for m in &nearest {
            if chunk_of.contains_key(&m.document_id) || m.similarity >= MIN_VECTOR_ONLY_SIMILARITY {
                chunk_of.entry(m.document_id).or_insert(m.chunk_id);
                vector_docs.push(m.document_id);
            }
        }
        let text_docs: Vec<i64> = text.iter().map(|m| m.document_id).collect();
        let fused = reciprocal_rank_fusion(&[text_docs, vector_docs], RRF_K);
        let fused: Vec<Ranked> = fused
            .into_iter()
            .filter_map(|(doc, score)| chunk_of.get(&doc).map(|&chunk_id| Ranked { chunk_id, score }))
            .collect();
        let Some(reranker) = &providers.reranker else { return Ok(Ok((fused, false))) };
        let candidates: Vec<&Ranked> =
            fused.iter().take(RERANK_CANDIDATES).filter(|r| vectors.text(r.chunk_id).is_some()).collect();
        if candidates.is_empty() {
            return Ok(Ok((fused, false)));
        }
        let documents: Vec<String> =
            candidates.iter().map(|r| vectors.text(r.chunk_id).unwrap_or_default().to_owned()).collect();
        let order = match reranker.rerank(query, &documents).await {
            Ok(order) => order,
            Err(e) => return Ok(Err(format!("rerank: {e}"))),
        };
        let mut reranked: Vec<Ranked> = Vec::with_capacity(order.len());
        let mut used = vec![false; candidates.len()];
        for (i, relevance) in order {
            match used.get_mut(i) {
                Some(u) if !*u => {
                    *u = true;
                    reranked.push(Ranked { chunk_id: candidates[i].chunk_id, score: relevance });
                }
                _ => return Ok(Err(format!("rerank: the provider's answer is unusable: bad index {i}"))),
            }
        }
        Ok(Ok((reranked, true)))
    }

    /// The vector index of `generation`, loading it when the ingest changed since the last load.
    async fn vectors_at(&self, generation: i64, model: &str) -> Result<Arc<VectorIndex>, RepoError> {
        let current = self.vectors.read().unwrap_or_else(std::sync::PoisonError::into_inner).clone();
        if let Some(v) = current.filter(|v| v.generation() == generation) {
            return Ok(v);
        }
        let fresh = Arc::new(VectorIndex::build(generation, self.index.vectors(model).await?));
        *self.vectors.write().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(fresh.clone());
        Ok(fresh)
    }

    async fn to_hits(&self, query: &str, ranked: &[Ranked]) -> Result<Vec<SearchHit>, RepoError> {
        if ranked.is_empty() {
            return Ok(Vec::new());
        }
        let ids: Vec<i64> = ranked.iter().map(|r| r.chunk_id).collect();
        let mut details: HashMap<i64, _> =
            self.index.hit_details(query, &ids).await?.into_iter().map(|d| (d.chunk_id, d)).collect();
        Ok(ranked
            .iter()
            .filter_map(|r| {
                details.remove(&r.chunk_id).map(|d| SearchHit {
                    url: super::model::page_url(&d.slug, Some(&d.heading)),
                    slug: d.slug,
                    title: d.title,
                    category: d.category,
                    snippet: d.snippet,
                    score: (r.score * 10_000.0).round() / 10_000.0,
                })
            })
            .collect())
    }
}

fn from_text(matches: &[TextMatch], limit: usize) -> Vec<Ranked> {
    matches.iter().take(limit).map(|m| Ranked { chunk_id: m.chunk_id, score: m.score }).collect()
}

#[async_trait]
impl DocsSearch for DocsSearchService {
    async fn search(&self, raw_query: &str, limit: u8) -> Result<SearchResult, SearchError> {
        self.search_with(raw_query, limit, self.hybrid.as_ref()).await
    }

    async fn search_full_text(&self, raw_query: &str, limit: u8) -> Result<SearchResult, SearchError> {
        self.search_with(raw_query, limit, None).await
    }
}

impl DocsSearchService {
    /// A search, hybrid with `providers`, full-text without.
    async fn search_with(
        &self,
        raw_query: &str,
        limit: u8,
        providers: Option<&HybridProviders>,
    ) -> Result<SearchResult, SearchError> {
        if !(1..=MAX_LIMIT).contains(&limit) {
            return Err(SearchError::InvalidLimit(limit));
        }
        let limit = usize::from(limit);
        let query = normalize_query(raw_query);
        let mut mode = SearchMode::FullText;
        let mut reranked = false;
        let mut fallback_reason = None;
        let ranked = if !is_searchable(&query) {
            Vec::new()
        } else if let Some(providers) = providers {
            // The database and the provider work at the same time: hybrid costs the slower of the
            // two, and the full-text list is already there if the provider fails.
            let texts = [query.clone()];
            let (text, embedded, generation) = futures_util::join!(
                self.index.full_text(&query, FUSION_CANDIDATES),
                providers.embedder.embed(&texts),
                self.index.generation()
            );
            let text = text?;
            match self.ranked_hybrid(providers, &query, &text, embedded, generation?).await? {
                Ok((mut ranked, was_reranked)) => {
                    mode = SearchMode::Hybrid;
                    reranked = was_reranked;
                    ranked.truncate(limit);
                    ranked
                }
                Err(reason) => {
                    fallback_reason = Some(reason);
                    from_text(&text, limit)
                }
            }
        } else {
            from_text(&self.index.full_text(&query, limit).await?, limit)
        };
        let hits = self.to_hits(&query, &ranked).await?;
        let suggestion = hits.is_empty().then(|| suggestion_for(&query));
        Ok(SearchResult { total: hits.len(), query, hits, mode, reranked, fallback_reason, suggestion })
    }
}

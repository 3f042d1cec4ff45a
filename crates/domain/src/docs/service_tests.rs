//! Unit tests of the search service with mocked index and providers.

#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use super::model::SearchMode;
use super::ports::*;
use super::service::{DocsSearchService, HybridProviders};

fn text_match(chunk_id: i64, document_id: i64, score: f64) -> TextMatch {
    TextMatch { chunk_id, document_id, score }
}

fn index_with(text: Vec<TextMatch>, vectors: Vec<StoredVector>) -> MockDocsIndex {
    let mut index = MockDocsIndex::new();
    index.expect_full_text().returning(move |_, n| Ok(text.iter().take(n).cloned().collect()));
    index.expect_generation().returning(|| Ok(7));
    index.expect_vectors().times(..=1).returning(move |_| Ok(vectors.clone()));
    index.expect_hit_details().returning(|_, ids| {
        Ok(ids
            .iter()
            .map(|&id| HitDetails {
                chunk_id: id,
                slug: format!("page-{id}"),
                title: format!("Page {id}"),
                category: "c".into(),
                heading: "Set up: Step 1".into(),
                snippet: "…".into(),
            })
            .collect())
    });
    index
}

fn vector(chunk_id: i64, document_id: i64, v: Vec<f32>) -> StoredVector {
    StoredVector { chunk_id, document_id, text: format!("text {chunk_id}"), vector: v }
}

fn embedder(answer: Result<Vec<Vec<f32>>, ProviderError>) -> Arc<dyn Embedder> {
    let mut e = MockEmbedder::new();
    e.expect_model().return_const("m".to_owned());
    e.expect_embed().returning(move |_| answer.clone());
    Arc::new(e)
}

fn slugs(r: &super::model::SearchResult) -> Vec<&str> {
    r.hits.iter().map(|h| h.slug.as_str()).collect()
}

#[tokio::test]
async fn limit_outside_one_to_eight_is_refused() {
    let service = DocsSearchService::full_text(Arc::new(MockDocsIndex::new()));
    assert!(matches!(service.search("keys", 0).await, Err(SearchError::InvalidLimit(0))));
    assert!(matches!(service.search("keys", 9).await, Err(SearchError::InvalidLimit(9))));
}

#[tokio::test]
async fn text_without_letters_finds_nothing_and_suggests() {
    let service = DocsSearchService::full_text(Arc::new(MockDocsIndex::new()));
    let r = service.search("&|!():* 🦀", 5).await.unwrap();
    assert!(r.hits.is_empty());
    assert_eq!(r.total, 0);
    assert!(r.suggestion.is_some());
}

#[tokio::test]
async fn full_text_keeps_the_index_order_and_limit() {
    let index = index_with(vec![text_match(1, 10, 0.9), text_match(2, 20, 0.5), text_match(3, 30, 0.1)], vec![]);
    let r = DocsSearchService::full_text(Arc::new(index)).search("keys", 2).await.unwrap();
    assert_eq!(slugs(&r), ["page-1", "page-2"]);
    assert_eq!((r.mode, r.total, r.suggestion.is_none()), (SearchMode::FullText, 2, true));
}

#[tokio::test]
async fn hybrid_fuses_text_and_vector_lists() {
    let index = index_with(
        vec![text_match(1, 10, 0.9), text_match(2, 20, 0.5)],
        vec![vector(2, 20, vec![1.0, 0.0]), vector(3, 30, vec![0.9, 0.1]), vector(1, 10, vec![0.0, 1.0])],
    );
    let providers = HybridProviders { embedder: embedder(Ok(vec![vec![1.0, 0.0]])), reranker: None };
    let r = DocsSearchService::hybrid(Arc::new(index), providers).search("keys", 5).await.unwrap();
    assert_eq!(r.mode, SearchMode::Hybrid);
    // Page 2 is second in text and first in vectors; page 1 is first in text only.
    assert_eq!(slugs(&r), ["page-2", "page-1", "page-3"]);
    assert_eq!(r.fallback_reason, None);
}

#[tokio::test]
async fn every_provider_failure_falls_back_to_full_text() {
    let failures = [
        Err(ProviderError::Timeout(2000)),
        Err(ProviderError::Status(500)),
        Err(ProviderError::Unreachable("refused".into())),
        Err(ProviderError::InvalidResponse("not json".into())),
        Ok(vec![vec![1.0, 0.0, 0.0]]),
        Ok(vec![]),
    ];
    for answer in failures {
        let index = index_with(vec![text_match(1, 10, 0.9)], vec![vector(3, 30, vec![1.0, 0.0])]);
        let providers = HybridProviders { embedder: embedder(answer.clone()), reranker: None };
        let r = DocsSearchService::hybrid(Arc::new(index), providers).search("keys", 5).await.unwrap();
        assert_eq!(r.mode, SearchMode::FullText, "{answer:?}");
        assert_eq!(slugs(&r), ["page-1"]);
        assert!(r.fallback_reason.is_some());
    }
}

#[tokio::test]
async fn rerank_orders_the_fused_candidates() {
    let index = index_with(
        vec![text_match(1, 10, 0.9), text_match(2, 20, 0.5)],
        vec![vector(1, 10, vec![1.0, 0.0]), vector(2, 20, vec![0.0, 1.0])],
    );
    let mut reranker = MockReranker::new();
    reranker.expect_rerank().returning(|_, docs| {
        assert_eq!(docs, ["text 1", "text 2"]);
        Ok(vec![(1, 0.98), (0, 0.12)])
    });
    let providers =
        HybridProviders { embedder: embedder(Ok(vec![vec![1.0, 0.0]])), reranker: Some(Arc::new(reranker)) };
    let r = DocsSearchService::hybrid(Arc::new(index), providers).search("keys", 5).await.unwrap();
    assert_eq!((r.mode, r.reranked), (SearchMode::Hybrid, true));
    assert_eq!(slugs(&r), ["page-2", "page-1"]);
    assert_eq!(r.hits[0].score, 0.98);
}

#[tokio::test]
async fn rerank_failure_falls_back_to_full_text() {
    let index = index_with(vec![text_match(1, 10, 0.9)], vec![vector(1, 10, vec![1.0, 0.0])]);
    let mut reranker = MockReranker::new();
    reranker.expect_rerank().returning(|_, _| Err(ProviderError::Status(503)));
    let providers =
        HybridProviders { embedder: embedder(Ok(vec![vec![1.0, 0.0]])), reranker: Some(Arc::new(reranker)) };
    let r = DocsSearchService::hybrid(Arc::new(index), providers).search("keys", 5).await.unwrap();
    assert_eq!((r.mode, r.reranked), (SearchMode::FullText, false));
    assert!(r.fallback_reason.unwrap().starts_with("rerank"));
}

#[tokio::test]
async fn weak_vector_only_neighbours_are_not_answers() {
    let index = index_with(vec![], vec![vector(1, 10, vec![0.1, 1.0])]);
    let providers = HybridProviders { embedder: embedder(Ok(vec![vec![1.0, 0.0]])), reranker: None };
    let r = DocsSearchService::hybrid(Arc::new(index), providers).search("bake bread", 5).await.unwrap();
    assert_eq!(r.mode, SearchMode::Hybrid);
    assert!(r.hits.is_empty());
    assert!(r.suggestion.is_some());
}

#[tokio::test]
async fn a_full_text_search_never_calls_a_provider_even_when_hybrid_is_configured() {
    let index = index_with(vec![text_match(1, 10, 0.9), text_match(2, 20, 0.5)], vec![]);
    let mut e = MockEmbedder::new();
    e.expect_model().return_const("m".to_owned());
    e.expect_embed().times(0);
    let mut r = MockReranker::new();
    r.expect_rerank().times(0);
    let providers = HybridProviders { embedder: Arc::new(e), reranker: Some(Arc::new(r)) };
    let found = DocsSearchService::hybrid(Arc::new(index), providers).search_full_text("keys", 5).await.unwrap();
    assert_eq!(found.mode, SearchMode::FullText);
    assert_eq!(slugs(&found), ["page-1", "page-2"]);
    assert!(!found.reranked);
}

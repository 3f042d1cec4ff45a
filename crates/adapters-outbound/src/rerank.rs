//! Client of a Cohere/Jina-style rerank endpoint (`POST /rerank`), for hybrid documentation search.

use std::time::Duration;

use async_trait::async_trait;
use domain::docs::{ProviderError, Reranker};
use serde::Deserialize;

use super::embeddings::post_json;

/// A Cohere/Jina-style rerank provider.
#[derive(Debug, Clone)]
pub struct HttpReranker {
    client: reqwest::Client,
    url: String,
    model: Option<String>,
    api_key: Option<String>,
    timeout: Duration,
}

impl HttpReranker {
    /// A client of `url` (the full endpoint, or a base URL to which `/rerank` is added) that gives
    /// every call `timeout`.
    pub fn new(url: &str, model: Option<&str>, api_key: Option<&str>, timeout: Duration) -> Self {
        let url = url.trim().trim_end_matches('/');
        Self {
            client: reqwest::Client::new(),
            url: if url.ends_with("/rerank") { url.to_owned() } else { format!("{url}/rerank") },
            model: model.filter(|m| !m.is_empty()).map(str::to_owned),
            api_key: api_key.filter(|k| !k.is_empty()).map(str::to_owned),
            timeout,
        }
    }
}

#[derive(Deserialize)]
struct RerankResponse {
    results: Vec<RerankItem>,
}

#[derive(Deserialize)]
struct RerankItem {
    index: usize,
    relevance_score: f64,
}

#[async_trait]
impl Reranker for HttpReranker {
    async fn rerank(&self, query: &str, documents: &[String]) -> Result<Vec<(usize, f64)>, ProviderError> {
        let mut body = serde_json::json!({ "query": query, "documents": documents, "top_n": documents.len() });
        if let Some(model) = &self.model {
            body["model"] = serde_json::Value::String(model.clone());
        }
        let result = post_json::<RerankResponse>(&self.client, &self.url, self.api_key.as_deref(), self.timeout, &body)
            .await
            .and_then(|r| ordered(r, documents.len()));
        if let Err(e) = &result {
            tracing::warn!(provider = "rerank", url = %self.url, error = %e, "rerank provider failed");
        }
        result
    }
}

/// `(index, relevance)` most relevant first, checked against the number of documents sent.
fn ordered(response: RerankResponse, sent: usize) -> Result<Vec<(usize, f64)>, ProviderError> {
    if response.results.iter().any(|r| r.index >= sent || !r.relevance_score.is_finite()) {
        return Err(ProviderError::InvalidResponse("a result names no document sent or has no score".into()));
    }
    let mut out: Vec<(usize, f64)> = response.results.into_iter().map(|r| (r.index, r.relevance_score)).collect();
    out.sort_by(|a, b| b.1.total_cmp(&a.1));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_are_sorted_and_checked() {
        let r = |index, relevance_score| RerankItem { index, relevance_score };
        assert_eq!(ordered(RerankResponse { results: vec![r(0, 0.1), r(1, 0.9)] }, 2), Ok(vec![(1, 0.9), (0, 0.1)]));
        assert!(ordered(RerankResponse { results: vec![r(5, 0.1)] }, 2).is_err());
    }
}

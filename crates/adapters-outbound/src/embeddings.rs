//! Client of an OpenAI-compatible embeddings endpoint (`POST /v1/embeddings`), for hybrid
//! documentation search.

use std::time::Duration;

use async_trait::async_trait;
use domain::docs::{Embedder, ProviderError};
use serde::Deserialize;

/// An OpenAI-compatible embeddings provider.
#[derive(Debug, Clone)]
pub struct HttpEmbedder {
    client: reqwest::Client,
    url: String,
    model: String,
    api_key: Option<String>,
    timeout: Duration,
}

impl HttpEmbedder {
    /// A client of `url` (the full endpoint, or a base URL to which `/v1/embeddings` or
    /// `/embeddings` is added) that gives every call `timeout`.
    pub fn new(url: &str, model: &str, api_key: Option<&str>, timeout: Duration) -> Self {
        Self {
            client: reqwest::Client::new(),
            url: endpoint(url),
            model: model.to_owned(),
            api_key: api_key.filter(|k| !k.is_empty()).map(str::to_owned),
            timeout,
        }
    }

    /// The endpoint called.
    pub fn url(&self) -> &str {
        &self.url
    }
}

fn endpoint(url: &str) -> String {
    let url = url.trim().trim_end_matches('/');
    if url.ends_with("/embeddings") {
        url.to_owned()
    } else if url.ends_with("/v1") {
        format!("{url}/embeddings")
    } else {
        format!("{url}/v1/embeddings")
    }
}

#[derive(Deserialize)]
struct EmbeddingsResponse {
    data: Vec<EmbeddingItem>,
}

#[derive(Deserialize)]
struct EmbeddingItem {
    index: usize,
    embedding: Vec<f32>,
}

/// Maps a transport failure to the port's error.
pub(crate) fn transport_error(e: &reqwest::Error, timeout: Duration) -> ProviderError {
    if e.is_timeout() {
        ProviderError::Timeout(u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX))
    } else if let Some(status) = e.status() {
        ProviderError::Status(status.as_u16())
    } else if e.is_decode() {
        ProviderError::InvalidResponse(e.to_string())
    } else {
        ProviderError::Unreachable(e.to_string())
    }
}

/// Sends `body` to `url` and parses a 2xx JSON answer as `T`.
pub(crate) async fn post_json<T: serde::de::DeserializeOwned>(
    client: &reqwest::Client,
    url: &str,
    api_key: Option<&str>,
    timeout: Duration,
    body: &serde_json::Value,
) -> Result<T, ProviderError> {
    let mut request = client.post(url).timeout(timeout).json(body);
    if let Some(key) = api_key {
        request = request.bearer_auth(key);
    }
    let response = request.send().await.map_err(|e| transport_error(&e, timeout))?;
    let status = response.status();
    if !status.is_success() {
        return Err(ProviderError::Status(status.as_u16()));
    }
    let bytes = response.bytes().await.map_err(|e| transport_error(&e, timeout))?;
    serde_json::from_slice(&bytes).map_err(|e| ProviderError::InvalidResponse(e.to_string()))
}

#[async_trait]
impl Embedder for HttpEmbedder {
    fn model(&self) -> String {
        self.model.clone()
    }

    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, ProviderError> {
        let body = serde_json::json!({ "model": self.model, "input": texts });
        let result =
            post_json::<EmbeddingsResponse>(&self.client, &self.url, self.api_key.as_deref(), self.timeout, &body)
                .await
                .and_then(|r| vectors_in_order(r, texts.len()));
        if let Err(e) = &result {
            tracing::warn!(provider = "embeddings", url = %self.url, error = %e, "embeddings provider failed");
        }
        result
    }
}

/// The vectors by `index`, checked: one per input, one dimension, finite numbers.
fn vectors_in_order(mut response: EmbeddingsResponse, expected: usize) -> Result<Vec<Vec<f32>>, ProviderError> {
    let bad = |m: String| Err(ProviderError::InvalidResponse(m));
    if response.data.len() != expected {
        return bad(format!("{} embeddings for {expected} inputs", response.data.len()));
    }
    response.data.sort_by_key(|d| d.index);
    if response.data.iter().enumerate().any(|(i, d)| d.index != i) {
        return bad("the embeddings' indexes are not 0..n".into());
    }
    let dimension = response.data.first().map_or(0, |d| d.embedding.len());
    if dimension == 0 || response.data.iter().any(|d| d.embedding.len() != dimension) {
        return bad("the embeddings are empty or of different dimensions".into());
    }
    if response.data.iter().any(|d| d.embedding.iter().any(|x| !x.is_finite())) {
        return bad("an embedding holds a non-finite number".into());
    }
    Ok(response.data.into_iter().map(|d| d.embedding).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoint_accepts_base_or_full_urls() {
        assert_eq!(endpoint("http://h:1"), "http://h:1/v1/embeddings");
        assert_eq!(endpoint("http://h:1/v1/"), "http://h:1/v1/embeddings");
        assert_eq!(endpoint("http://h:1/v1/embeddings"), "http://h:1/v1/embeddings");
    }

    #[test]
    fn answers_are_reordered_and_checked() {
        let item = |index, embedding: Vec<f32>| EmbeddingItem { index, embedding };
        let ok = EmbeddingsResponse { data: vec![item(1, vec![2.0]), item(0, vec![1.0])] };
        assert_eq!(vectors_in_order(ok, 2), Ok(vec![vec![1.0], vec![2.0]]));
        let short = EmbeddingsResponse { data: vec![item(0, vec![1.0])] };
        assert!(vectors_in_order(short, 2).is_err());
        let ragged = EmbeddingsResponse { data: vec![item(0, vec![1.0]), item(1, vec![1.0, 2.0])] };
        assert!(vectors_in_order(ragged, 2).is_err());
    }
}

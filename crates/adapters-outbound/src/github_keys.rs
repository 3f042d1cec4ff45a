//! GitHub's published secret-scanning keys (`secret_scanning.github_keys_url`, by default
//! `https://api.github.com/meta/public_keys/secret_scanning`): fetched, kept, and fetched again only
//! rarely, because every alert — including forged ones from anyone — asks for them.
//!
//! The URL is the operator's setting, not a caller's: like the embeddings and rerank providers it
//! is fetched without the webhooks' SSRF filter (an operator may point it at an internal mirror).
//! What an anonymous caller can still cause is bounded here: the document is kept for an hour;
//! a request naming a key identifier the kept document lacks (GitHub publishing a new key) makes
//! a fetch at most once a second and at most 30 times an hour, whoever asks and however often —
//! half of what GitHub lets an unauthenticated client fetch, so forged alerts cannot get wms
//! refused by GitHub — so a newly published key verifies within a second of the last fetch;
//! concurrent callers wait for the one fetch in flight; a fetch gives up after 10 seconds and
//! reads at most 256 KiB.

use std::time::{Duration, Instant};

use async_trait::async_trait;
use domain::secret_scanning::{KeysUnavailable, ScanningKeySource, ScanningPublicKey};
use serde::Deserialize;
use tokio::sync::Mutex;

/// How long a fetched document is used before it is fetched again.
const KEEP_FOR: Duration = Duration::from_secs(3600);
/// The least time between two fetches, whatever asks for one.
const MIN_INTERVAL: Duration = Duration::from_secs(1);
/// The most fetches for an unknown key identifier in an hour.
const REFRESHES_PER_HOUR: usize = 30;
/// A fetch's deadline.
const TIMEOUT: Duration = Duration::from_secs(10);
/// The largest document read.
const MAX_BYTES: usize = 256 * 1024;

/// `{"public_keys": [{"key_identifier", "key", "is_current"}]}`
#[derive(Deserialize)]
struct KeysDocument {
    public_keys: Vec<KeyEntry>,
}

#[derive(Deserialize)]
struct KeyEntry {
    key_identifier: String,
    key: String,
    #[serde(default)]
    is_current: bool,
}

#[derive(Default)]
struct Kept {
    keys: Option<Vec<ScanningPublicKey>>,
    fetched_at: Option<Instant>,
    attempted_at: Option<Instant>,
    /// When the fetches for unknown key identifiers of the last hour were made.
    refreshes: std::collections::VecDeque<Instant>,
}

/// The client and what it keeps.
pub struct GithubKeysClient {
    client: reqwest::Client,
    url: String,
    kept: Mutex<Kept>,
}

impl std::fmt::Debug for GithubKeysClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GithubKeysClient").field("url", &self.url).finish_non_exhaustive()
    }
}

impl GithubKeysClient {
    /// A client of the document at `url`.
    pub fn new(url: &str) -> Self {
        Self { client: reqwest::Client::new(), url: url.trim().to_owned(), kept: Mutex::new(Kept::default()) }
    }

    async fn fetch(&self) -> Result<Vec<ScanningPublicKey>, String> {
        let mut res = self
            .client
            .get(&self.url)
            .header(reqwest::header::ACCEPT, "application/json")
            .header(reqwest::header::USER_AGENT, "wms-secret-scanning")
            .timeout(TIMEOUT)
            .send()
            .await
            .map_err(|e| format!("request failed: {e}"))?;
        if !res.status().is_success() {
            return Err(format!("answered {}", res.status()));
        }
        let mut body = Vec::new();
        while let Some(chunk) = res.chunk().await.map_err(|e| format!("reading failed: {e}"))? {
            if body.len() + chunk.len() > MAX_BYTES {
                return Err(format!("the document is larger than {MAX_BYTES} bytes"));
            }
            body.extend_from_slice(&chunk);
        }
        let doc: KeysDocument = serde_json::from_slice(&body).map_err(|e| format!("not a keys document: {e}"))?;
        Ok(doc
            .public_keys
            .into_iter()
            .map(|k| ScanningPublicKey { identifier: k.key_identifier, pem: k.key, is_current: k.is_current })
            .collect())
    }
}

#[async_trait]
impl ScanningKeySource for GithubKeysClient {
    async fn keys(&self, refresh: bool) -> Result<Vec<ScanningPublicKey>, KeysUnavailable> {
        // One fetch at a time: the others wait for it and use its result.
        let mut kept = self.kept.lock().await;
        let stale = kept.fetched_at.is_none_or(|t| t.elapsed() >= KEEP_FOR);
        let may_fetch = kept.attempted_at.is_none_or(|t| t.elapsed() >= MIN_INTERVAL);
        while kept.refreshes.front().is_some_and(|t| t.elapsed() >= KEEP_FOR) {
            kept.refreshes.pop_front();
        }
        let may_refresh = kept.refreshes.len() < REFRESHES_PER_HOUR;
        if may_fetch && (stale || (refresh && may_refresh)) {
            if !stale {
                kept.refreshes.push_back(Instant::now());
            }
            kept.attempted_at = Some(Instant::now());
            match self.fetch().await {
                Ok(keys) => {
                    kept.keys = Some(keys);
                    kept.fetched_at = Some(Instant::now());
                }
                // The kept keys (if any) stay in use: GitHub keeps old keys valid for a while.
                Err(e) => tracing::warn!(url = %self.url, error = %e, "fetching GitHub's secret-scanning keys failed"),
            }
        }
        kept.keys.clone().ok_or_else(|| KeysUnavailable("no keys document has been fetched yet".into()))
    }
}

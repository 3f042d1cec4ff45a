//! Name resolution (the creation-time SSRF check) and the HTTP transport that sends deliveries.

use std::net::IpAddr;
use std::time::Duration;

use async_trait::async_trait;

/// Why a host name could not be resolved.
#[derive(Debug, thiserror::Error)]
pub enum ResolveError {
    /// The name does not exist or has no addresses.
    #[error("the host name does not resolve")]
    NotFound,
    /// The resolver failed or timed out.
    #[error("name resolution failed: {0}")]
    Failed(String),
}

/// DNS resolution, for the creation-time SSRF check.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait HostResolver: Send + Sync {
    /// The addresses of `host`.
    ///
    /// # Errors
    /// [`ResolveError`] when there are none or the lookup fails.
    async fn resolve(&self, host: &str, port: u16) -> Result<Vec<IpAddr>, ResolveError>;
}

/// A signed request, ready to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutboundRequest {
    /// The destination URL.
    pub url: String,
    /// Header names (lowercase) and values.
    pub headers: Vec<(&'static str, String)>,
    /// The destination's static headers (validated names, lowercase), sent before wms's own.
    pub static_headers: Vec<(String, String)>,
    /// The body.
    pub body: String,
}

/// What came back from one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransportOutcome {
    /// The HTTP status, when the endpoint answered.
    pub status: Option<u16>,
    /// The `Retry-After` header, if any.
    pub retry_after: Option<String>,
    /// The start of the body, lossy UTF-8.
    pub excerpt: String,
    /// The transport error (timeout, refused, TLS, DNS, forbidden address), when it did not.
    pub error: Option<String>,
    /// How long the attempt took.
    pub duration: Duration,
    /// The endpoint did not take the request: the connection was refused or it timed out (an
    /// overload signal for the pace, like 429 and 503).
    pub overloaded: bool,
}

/// The HTTP client that sends deliveries (timeouts, no redirects, bounded reads, SSRF checks at
/// connect time).
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait WebhookTransport: Send + Sync {
    /// Sends `request`; never fails, a failure is an outcome.
    async fn send(&self, request: OutboundRequest) -> TransportOutcome;
}

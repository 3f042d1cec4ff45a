//! The HTTP client that delivers webhooks, and the DNS resolver both it and the creation-time
//! check use. Every address a connection is made to passes the SSRF rules: names through the
//! resolver below (so a name that resolves to an internal address at delivery time, DNS
//! rebinding, is refused), literal IP addresses before the request.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use domain::webhooks::delivery::USER_AGENT;
use domain::webhooks::ssrf::AddressPolicy;
use domain::webhooks::{HostResolver, OutboundRequest, ResolveError, TransportOutcome, WebhookTransport};
use reqwest::dns::{Addrs, Name, Resolve, Resolving};

/// The most of a response body that is read (the rest is never downloaded).
pub const MAX_RESPONSE_BYTES: usize = 64 * 1024;
/// The most of it kept in the delivery log.
pub const EXCERPT_BYTES: usize = 4 * 1024;
/// How long a name lookup may take.
const DNS_TIMEOUT: Duration = Duration::from_secs(5);

async fn lookup(host: &str, port: u16) -> Result<Vec<IpAddr>, ResolveError> {
    match tokio::time::timeout(DNS_TIMEOUT, tokio::net::lookup_host((host, port))).await {
        Err(_) => Err(ResolveError::Failed("timed out".into())),
        Ok(Err(e)) if e.kind() == std::io::ErrorKind::NotFound => Err(ResolveError::NotFound),
        Ok(Err(e)) => Err(ResolveError::Failed(e.to_string())),
        Ok(Ok(addrs)) => {
            let mut ips: Vec<IpAddr> = addrs.map(|a| a.ip()).collect();
            ips.dedup();
            if ips.is_empty() {
                Err(ResolveError::NotFound)
            } else {
                Ok(ips)
            }
        }
    }
}

/// The system resolver (`getaddrinfo`), for the check when a destination is saved.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemResolver;

#[async_trait]
impl HostResolver for SystemResolver {
    async fn resolve(&self, host: &str, port: u16) -> Result<Vec<IpAddr>, ResolveError> {
        lookup(host, port).await
    }
}

/// The resolver of the delivery client: only addresses the policy permits come out of it.
struct GuardedResolver {
    policy: Arc<AddressPolicy>,
}

/// A connection refused by the SSRF rules.
#[derive(Debug, thiserror::Error)]
#[error("refused: {0}")]
struct Refused(String);

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let policy = self.policy.clone();
        Box::pin(async move {
            // `localhost` and friends are judged by what they resolve to, like any name.
            let host = name.as_str().to_owned();
            let ips = lookup(&host, 0).await.map_err(|e| Box::new(e) as Box<dyn std::error::Error + Send + Sync>)?;
            let allowed: Vec<SocketAddr> =
                ips.iter().copied().filter(|ip| policy.permits(*ip)).map(|ip| SocketAddr::new(ip, 0)).collect();
            if allowed.is_empty() {
                // Recorded on the delivery, which the tenant reads: the addresses stay out of it.
                return Err(Box::new(Refused(format!(
                    "`{host}` resolves only to private, loopback or reserved addresses"
                ))) as _);
            }
            Ok(Box::new(allowed.into_iter()) as Addrs)
        })
    }
}

/// Delivers webhooks with reqwest: no redirects, no proxies, a total timeout, bounded reads.
#[derive(Clone)]
pub struct HttpWebhookTransport {
    client: reqwest::Client,
    policy: Arc<AddressPolicy>,
    timeout: Duration,
}

impl std::fmt::Debug for HttpWebhookTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpWebhookTransport").field("timeout", &self.timeout).finish_non_exhaustive()
    }
}

impl HttpWebhookTransport {
    /// A client enforcing `policy`, giving up on a request after `timeout` (15 s in production).
    ///
    /// # Errors
    /// When the TLS backend cannot be initialised.
    pub fn new(policy: AddressPolicy, timeout: Duration) -> anyhow::Result<Self> {
        let policy = Arc::new(policy);
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            // An HTTP(S)_PROXY from the environment would connect to addresses we never checked.
            .no_proxy()
            .timeout(timeout)
            .connect_timeout(timeout.min(Duration::from_secs(10)))
            .pool_idle_timeout(Duration::from_secs(30))
            .dns_resolver(Arc::new(GuardedResolver { policy: policy.clone() }))
            .user_agent(USER_AGENT)
            .build()?;
        Ok(Self { client, policy, timeout })
    }

    fn refused_literal(&self, url: &str) -> Option<String> {
        let parsed = reqwest::Url::parse(url).ok()?;
        let ip = match parsed.host()? {
            url::Host::Ipv4(a) => IpAddr::V4(a),
            url::Host::Ipv6(a) => IpAddr::V6(a),
            url::Host::Domain(_) => return None,
        };
        (!self.policy.permits(ip))
            .then(|| "refused: the URL points at a private, loopback or reserved address".to_owned())
    }
}

fn failure(error: String, started: Instant, overloaded: bool) -> TransportOutcome {
    TransportOutcome {
        status: None,
        retry_after: None,
        excerpt: String::new(),
        error: Some(error),
        duration: started.elapsed(),
        overloaded,
    }
}

/// The error and its causes, `outer: inner: innermost`.
fn chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut cur = e.source();
    while let Some(s) = cur {
        let msg = s.to_string();
        if !out.contains(&msg) {
            out.push_str(": ");
            out.push_str(&msg);
        }
        cur = s.source();
    }
    out
}

#[async_trait]
impl WebhookTransport for HttpWebhookTransport {
    async fn send(&self, request: OutboundRequest) -> TransportOutcome {
        let started = Instant::now();
        if let Some(refused) = self.refused_literal(&request.url) {
            return failure(refused, started, false);
        }
        let mut builder = self.client.post(&request.url);
        // The destination's own headers first: wms's (signature, content type) are set after them
        // and win (their names are refused as static headers anyway).
        for (name, value) in &request.static_headers {
            builder = builder.header(name.as_str(), value);
        }
        for (name, value) in &request.headers {
            builder = builder.header(*name, value);
        }
        let mut response = match builder.body(request.body).send().await {
            Ok(r) => r,
            Err(e) if e.is_timeout() => {
                return failure(format!("timeout: no answer within {} s", self.timeout.as_secs()), started, true)
            }
            // A refused connection says the receiver cannot take more now (the pace falls); an
            // address refused by the SSRF guard is not a connection error of the receiver.
            Err(e) => {
                let refused = e.is_connect() && chain(&e).to_ascii_lowercase().contains("refused");
                return failure(chain(&e), started, refused);
            }
        };
        let status = response.status().as_u16();
        let retry_after =
            response.headers().get(reqwest::header::RETRY_AFTER).and_then(|v| v.to_str().ok()).map(str::to_owned);
        let mut body: Vec<u8> = Vec::new();
        let mut error = None;
        // Read at most MAX_RESPONSE_BYTES; dropping the response afterwards closes the connection
        // instead of downloading the rest.
        while body.len() < MAX_RESPONSE_BYTES {
            match response.chunk().await {
                Ok(Some(chunk)) => body.extend_from_slice(&chunk[..chunk.len().min(MAX_RESPONSE_BYTES - body.len())]),
                Ok(None) => break,
                Err(e) => {
                    // The status counts; a body cut short is noted but does not change the verdict.
                    error = Some(if e.is_timeout() { "timeout while reading the body".to_owned() } else { chain(&e) });
                    break;
                }
            }
        }
        body.truncate(EXCERPT_BYTES);
        TransportOutcome {
            status: Some(status),
            retry_after,
            // PostgreSQL text cannot hold NUL.
            excerpt: String::from_utf8_lossy(&body).replace('\0', ""),
            error,
            duration: started.elapsed(),
            overloaded: false,
        }
    }
}

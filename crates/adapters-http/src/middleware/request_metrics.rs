//! Request metrics for Prometheus (docs/contract.md, "Operations at scale"): requests by route and
//! status, their latency, and the rate limit's decisions.
//!
//! The series go through the `metrics` facade: without an installed recorder (no
//! `metrics.bind`) this middleware is not even wrapped, and with one each recording is a few
//! atomic operations on a handle found by its labels (not yet measured with `scripts/bench-auth`:
//! `docs/benchmarks.md`, "Scale-out").

use std::time::Instant;

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::Method;
use actix_web::middleware::Next;
use actix_web::HttpMessage;
use domain::rate_limit::RateLimitStatus;

/// Requests answered, by `route`, `method` and `status`.
pub const REQUESTS: &str = "wms_http_requests_total";
/// Time from the request's arrival to its response's head, by `route` and `method`, in seconds.
pub const DURATION: &str = "wms_http_request_duration_seconds";
/// The rate limit's decisions, by `limit` (`requests`: the per-credential window of `/v1` and
/// the assistant; `other`: any other 429, such as the sign-in throttle) and `outcome`
/// (`allowed`, `limited`).
pub const RATE_LIMIT: &str = "wms_rate_limit_decisions_total";

/// Describes the series (their `# HELP` lines); once, when the recorder is installed.
pub fn describe() {
    metrics::describe_counter!(REQUESTS, "HTTP requests answered, by route pattern, method and status.");
    metrics::describe_histogram!(
        DURATION,
        metrics::Unit::Seconds,
        "Time to answer an HTTP request (to the response head), by route pattern and method."
    );
    metrics::describe_counter!(RATE_LIMIT, "Rate-limit decisions, by limit and outcome (allowed, limited).");
}

/// Middleware body: counts the request under its route's pattern (`/v1/threads/:id`, never the
/// raw path, so the series stay few), with its status and latency. An error that an inner
/// middleware returns (rather than a response) is counted with the status actix answers it with.
///
/// # Errors
/// Whatever the inner service fails with.
pub async fn record(
    req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let started = Instant::now();
    let method = method_label(req.method());
    let route = req.match_pattern().map_or_else(|| "unmatched".to_owned(), route_label);
    let result = next.call(req).await;
    let elapsed = started.elapsed();
    let (status, rate) = match &result {
        Ok(res) => (
            res.status().as_u16(),
            res.request().extensions().get::<RateLimitStatus>().map(|r| r.retry_after_secs.is_some()),
        ),
        Err(e) => (e.as_response_error().status_code().as_u16(), None),
    };
    metrics::histogram!(DURATION, "route" => route.clone(), "method" => method).record(elapsed.as_secs_f64());
    metrics::counter!(REQUESTS, "route" => route, "method" => method, "status" => status.to_string()).increment(1);
    match rate {
        Some(limited) => {
            let outcome = if limited { "limited" } else { "allowed" };
            metrics::counter!(RATE_LIMIT, "limit" => "requests", "outcome" => outcome).increment(1);
        }
        None if status == 429 => metrics::counter!(RATE_LIMIT, "limit" => "other", "outcome" => "limited").increment(1),
        None => {}
    }
    result
}

/// A route pattern as a label: `/v1/channels/{channel_id}` becomes `/v1/channels/:channel_id`.
/// Braces are valid inside a label value, but line-oriented tools and parsers (the
/// `prometheus-parse` crate among them) take the first `}` for the end of the labels.
fn route_label(pattern: String) -> String {
    if pattern.contains('{') {
        pattern.replace('{', ":").replace('}', "")
    } else {
        pattern
    }
}

/// The method as a label: the standard ones by name, anything else as `other`.
fn method_label(m: &Method) -> &'static str {
    match *m {
        Method::GET => "GET",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::PATCH => "PATCH",
        Method::DELETE => "DELETE",
        Method::HEAD => "HEAD",
        Method::OPTIONS => "OPTIONS",
        _ => "other",
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn route_labels_have_no_braces() {
        assert_eq!(super::route_label("/v1/channels/{channel_id}".into()), "/v1/channels/:channel_id");
        assert_eq!(super::route_label("/healthz".into()), "/healthz");
    }
}

//! A request id for every request: taken from a well-formed `X-Request-Id` or generated, put on the
//! response and on every log line of the request's span, which names the route pattern (never the
//! raw path: a one-time link's path holds its token).

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{HeaderName, HeaderValue};
use actix_web::middleware::Next;
use actix_web::HttpMessage;
use tracing::Instrument;

/// The header carrying the id both ways.
pub static REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// The id of the current request, available to handlers through request extensions.
#[derive(Debug, Clone)]
pub struct RequestId(pub String);

/// Middleware body: assigns the id, runs the request in a span and logs one line at the end.
///
/// # Errors
/// Whatever the inner service fails with.
pub async fn request_id(
    req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let id = req
        .headers()
        .get(&REQUEST_ID)
        .and_then(|v| v.to_str().ok())
        .filter(|v| (1..=64).contains(&v.len()) && v.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'))
        .map_or_else(|| uuid::Uuid::new_v4().simple().to_string(), str::to_owned);
    req.extensions_mut().insert(RequestId(id.clone()));
    // The route's pattern (`/invitations/{token}`), never the raw path: paths of one-time links
    // carry their secret, and the query string is where a careless client puts one.
    let route = req.match_pattern().unwrap_or_else(|| "unmatched".to_owned());
    let span = tracing::info_span!("request", request_id = %id, method = %req.method(), route = %route);
    let started = std::time::Instant::now();
    let mut res = next.call(req).instrument(span.clone()).await?;
    let status = res.status().as_u16();
    span.in_scope(|| tracing::info!(status, elapsed_ms = started.elapsed().as_secs_f64() * 1000.0, "request done"));
    if let Ok(v) = HeaderValue::from_str(&id) {
        res.headers_mut().insert(REQUEST_ID.clone(), v);
    }
    Ok(res)
}

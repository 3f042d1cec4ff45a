//! `/v1` authentication: the middleware that authenticates and rate-limits every request of the
//! scope, and puts the rate-limit headers on every response it produced for an authenticated
//! caller, success or error.
//!
//! A handler's response is never released before its request's check admitted it. Usually the
//! handler only starts after the check; a `GET` or `HEAD` with an API key this instance admitted
//! before ([`super::admitted`]) runs its handler *while* its check runs, on the guess that the
//! key is still good: one round trip less of latency for the common case. Only a route whose
//! action merely reads runs ahead; a `GET` with an effect (revealing a webhook secret decrypts it
//! and audits the view) waits for the check inside the route ([`super::admitted::Unconfirmed`]).
//! If the check refuses the request, the prepared response is dropped unseen and the refusal is
//! the answer — exactly what the caller would have got without the guess, and nothing happened.

use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::AUTHORIZATION;
use actix_web::http::Method;
use actix_web::middleware::Next;
use actix_web::{web, HttpMessage, HttpRequest, HttpResponse};
use domain::access::Caller;
use domain::auth::{presented_token, AuthenticateError, PresentedToken};
use domain::rate_limit::RateLimitStatus;

use super::admitted::Unconfirmed;
use super::Authenticated;
use crate::error::ApiError;
use crate::rate_limit::add_rate_headers;
use crate::state::AppState;

/// `/v1` paths that the middleware lets through without credentials: sign-in, the API document,
/// and sign-out (which checks its token itself, because it works on every plan).
pub const PUBLIC_PATHS: [&str; 4] =
    ["/v1/auth/login", "/v1/auth/logout", "/v1/auth/password-reset", "/v1/openapi.json"];

/// Middleware for the `/v1` scope.
///
/// # Errors
/// Only what the inner service fails with; refusals are responses.
pub async fn authenticate_v1(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    let public = PUBLIC_PATHS.contains(&req.path());
    let guessed = if public { None } else { guess(req.request()) };
    if let Some((guess, state, token)) = guessed {
        // The handler finds the guessed caller where the check would have put it. (No clone of
        // the request may be kept while the handler is routed, hence the check works on parts.)
        let (tell, unconfirmed) = Unconfirmed::pair();
        req.extensions_mut().insert(Authenticated(guess));
        req.extensions_mut().insert(unconfirmed);
        let client = req.peer_addr().map(|a| a.ip());
        let checked = async {
            let verdict = check(&state, Ok(token), client).await;
            tell.tell(matches!(&verdict.result, Ok(caller) if *caller == guess));
            verdict
        };
        let (verdict, prepared) = futures_util::future::join(checked, next.call(req)).await;
        let prepared = match (prepared, &verdict.result) {
            (Ok(prepared), _) => prepared,
            (Err(_), Err(_)) => return Err(verdict.into_refusal().into()),
            (Err(e), Ok(_)) => return Err(e),
        };
        let (http, body) = prepared.into_parts();
        let mut res = match verdict.record(&http) {
            Ok(caller) if caller == guess => ServiceResponse::new(http, body.map_into_boxed_body()),
            Ok(_) => refusal(http, ApiError::Internal(anyhow::anyhow!("an API key changed its owner"))),
            Err(e) => refusal(http, e),
        };
        add_rate_headers(&mut res);
        return Ok(res);
    }
    if !public {
        if let Err(e) = resolve_v1_caller(req.request()).await {
            let mut res = req.error_response(e);
            add_rate_headers(&mut res);
            return Ok(res);
        }
    }
    let mut res = next.call(req).await?.map_into_boxed_body();
    add_rate_headers(&mut res);
    Ok(res)
}

fn refusal(http: HttpRequest, e: ApiError) -> ServiceResponse<BoxBody> {
    ServiceResponse::new(http, HttpResponse::from_error(e))
}

/// Who a read-only request with a recently admitted API key is probably from, with what its
/// check needs.
fn guess(req: &HttpRequest) -> Option<(Caller, web::Data<AppState>, PresentedToken)> {
    if !matches!(*req.method(), Method::GET | Method::HEAD) {
        return None;
    }
    let state = app_state(req).ok()?;
    let token = presented_token(authorization(req).ok()?.as_deref()).ok()?;
    let guess = state.auth.admitted.guess(&token.digest)?;
    Some((guess, state, token))
}

/// What a check found: the caller or the refusal, and the window when the request was counted.
struct V1Check {
    result: Result<Caller, ApiError>,
    rate: Option<RateLimitStatus>,
}

impl V1Check {
    /// Leaves the caller and the window in `req`'s extensions, for the handler and the headers.
    fn record(self, req: &HttpRequest) -> Result<Caller, ApiError> {
        if let Some(rate) = self.rate {
            req.extensions_mut().insert(rate);
        }
        if let Ok(caller) = &self.result {
            Authenticated::record(req, *caller);
        }
        self.result
    }

    fn into_refusal(self) -> ApiError {
        match self.result {
            Ok(_) => ApiError::Internal(anyhow::anyhow!("not a refusal")),
            Err(e) => e,
        }
    }
}

/// Checks a presented credential (or reports why the `Authorization` header has none) for `/v1`
/// and counts the request; remembers admitted API keys and forgets refused ones
/// ([`super::admitted`]).
async fn check(
    state: &AppState,
    token: Result<PresentedToken, AuthenticateError>,
    client: Option<std::net::IpAddr>,
) -> V1Check {
    let (result, digest) = match token {
        Ok(token) => {
            let result = state.auth.identity(&state.oauth).rest(&token, client).await;
            (result, Some(token.digest))
        }
        Err(e) => (Err(e), None),
    };
    match result {
        Ok(ok) => {
            let caller = ok.caller;
            if let Some(digest) = digest {
                state.auth.admitted.admitted(digest, caller);
            }
            V1Check { result: Ok(caller), rate: ok.rate }
        }
        Err(e) => {
            if let Some(digest) = &digest {
                state.auth.admitted.refused(digest);
            }
            V1Check { rate: e.rate().copied(), result: Err(e.into()) }
        }
    }
}

/// Authenticates a `/v1` request (an `advanced` workspace's key or login token) and counts it;
/// leaves the [`Caller`] (for [`Authenticated`]) and the window in the request's extensions.
///
/// # Errors
/// The 401, 403 and 429 problems of `docs/contract.md`.
pub async fn resolve_v1_caller(req: &HttpRequest) -> Result<Caller, ApiError> {
    let state = app_state(req)?;
    let token = presented_token(authorization(req)?.as_deref());
    check(&state, token, req.peer_addr().map(|a| a.ip())).await.record(req)
}

/// The handlers' state.
///
/// # Errors
/// 500 when the application was built without it (a wiring bug).
pub fn app_state(req: &HttpRequest) -> Result<web::Data<AppState>, ApiError> {
    req.app_data::<web::Data<AppState>>()
        .cloned()
        .ok_or_else(|| ApiError::Internal(anyhow::anyhow!("AppState is not registered")))
}

/// The value of the one `Authorization` header, if any. Query strings are never looked at: a
/// credential there would end up in logs and browser histories.
///
/// # Errors
/// 401 `invalid_token` for several `Authorization` headers.
pub fn authorization(req: &HttpRequest) -> Result<Option<Vec<u8>>, ApiError> {
    let mut values = req.headers().get_all(AUTHORIZATION);
    let first = values.next().map(|v| v.as_bytes().to_vec());
    if values.next().is_some() {
        return Err(ApiError::InvalidToken("send exactly one Authorization header".into()));
    }
    Ok(first)
}

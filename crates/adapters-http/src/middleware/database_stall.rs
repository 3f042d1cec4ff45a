//! A request never hangs on a database that stopped answering (docs/contract.md, "Abuse limits":
//! 503 `service_unavailable` with `Retry-After`, never a hang).
//!
//! `database.acquire_timeout_ms` bounds the wait for a connection, but a connection already lent
//! out can stop answering too: a server that is frozen (`SIGSTOP`, a paused VM) or a PgBouncer
//! paused in front of it keeps the socket open and never replies. No statement of the request
//! would ever return. So a request still running after that bound asks whether the database
//! answers at all (one probe at a time for the whole instance, itself bounded,
//! [`HealthCheck::answers`]): if not, it is answered 503 and its work dropped (a transaction cut
//! that way is never committed: its connection is discarded, and the server rolls it back). A
//! request that is merely slow (a lock wait, a large report, a long poll) on a database that
//! answers goes on, and is asked again after each further bound.

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::middleware::Next;
use actix_web::web;

use crate::error::{ApiError, DATABASE_UNAVAILABLE};
use crate::state::AppState;

/// Middleware body: runs the request, answering 503 once it has outlived the bound while the
/// database does not answer.
///
/// # Errors
/// Whatever the inner service fails with.
pub async fn bound(
    req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let Some(state) = req.app_data::<web::Data<AppState>>().cloned() else { return next.call(req).await };
    let Some(wait) = state.health.wait_bound() else { return next.call(req).await };
    let work = next.call(req);
    tokio::pin!(work);
    loop {
        // The work first: a request answered at its first poll (most without the database)
        // never arms the timer.
        tokio::select! {
            biased;
            done = &mut work => return done,
            () = tokio::time::sleep(wait) => {}
        }
        tokio::select! {
            biased;
            done = &mut work => return done,
            answers = state.health.answers() => if !answers {
                // Rendered by its `ResponseError` (problem+json, `Retry-After`): the request is
                // gone with the work, so there is nothing to build a response on here.
                return Err(ApiError::ServiceUnavailable(DATABASE_UNAVAILABLE.into()).into());
            }
        }
    }
}

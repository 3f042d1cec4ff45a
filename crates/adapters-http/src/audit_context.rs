//! Where a request came from, for the audit log: the client's address, its user agent and the
//! request id ([`crate::middleware::request_id`]). Handlers of privileged writes take a
//! [`RequestMeta`] and turn it into the domain's [`AuditContext`] with the acting credential, or
//! take [`Acting`], which does both from the request's one caller.

use std::future::{ready, Ready};

use actix_web::dev::Payload;
use actix_web::http::header::USER_AGENT;
use actix_web::{FromRequest, HttpMessage, HttpRequest};
use domain::audit::{AuditActor, AuditContext};
use domain::auth::LoginRequest;
use domain::workspace::WorkspaceId;

use crate::authentication::Authenticated;
use crate::error::ApiError;
use crate::middleware::request_id::RequestId;

/// The request's address, user agent and id.
#[derive(Debug, Clone, Default)]
pub struct RequestMeta {
    /// The peer's address (the TCP connection's: a forwarded header is the client's word).
    pub ip: Option<String>,
    /// `User-Agent`.
    pub user_agent: Option<String>,
    /// The request id.
    pub request_id: Option<String>,
}

impl RequestMeta {
    /// Reads them from `req`.
    pub fn of(req: &HttpRequest) -> Self {
        Self {
            ip: req.peer_addr().map(|a| a.ip().to_string()),
            user_agent: req.headers().get(USER_AGENT).and_then(|v| v.to_str().ok()).map(str::to_owned),
            request_id: req.extensions().get::<RequestId>().map(|r| r.0.clone()),
        }
    }

    /// The audit context of `actor` acting through this request.
    pub fn context(&self, actor: impl Into<AuditActor>) -> AuditContext {
        AuditContext::new(actor, self.ip.clone(), self.user_agent.as_deref(), self.request_id.clone())
    }

    /// The context of a request whose actor is known only later (a sign-in).
    pub fn anonymous(&self) -> AuditContext {
        self.context(AuditContext::system().actor)
    }
}

/// A sign-in attempt made through `req` (the login API, the sign-in page), from the connection's
/// address: forwarded-for headers are the client's to forge.
pub fn login_request(
    req: &HttpRequest,
    email: String,
    password: String,
    workspace: Option<WorkspaceId>,
) -> LoginRequest {
    LoginRequest {
        email,
        password,
        workspace_id: workspace,
        client: req.peer_addr().map(|a| a.ip()),
        context: RequestMeta::of(req).anonymous(),
    }
}

impl FromRequest for RequestMeta {
    type Error = actix_web::Error;
    type Future = Ready<Result<Self, Self::Error>>;

    fn from_request(req: &HttpRequest, _payload: &mut Payload) -> Self::Future {
        ready(Ok(Self::of(req)))
    }
}

/// The caller's workspace and the audit context of its privileged write, on whichever surface
/// serves the route (the webhooks' handlers serve `/v1` and the settings API alike).
#[derive(Debug)]
pub struct Acting {
    /// The caller's workspace.
    pub workspace: WorkspaceId,
    /// Who asks, from where.
    pub audit: AuditContext,
}

impl FromRequest for Acting {
    type Error = ApiError;
    type Future = Ready<Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, _payload: &mut Payload) -> Self::Future {
        let caller = Authenticated::required(req);
        ready(caller.map(|c| Self { workspace: c.workspace_id, audit: RequestMeta::of(req).context(c.actor) }))
    }
}

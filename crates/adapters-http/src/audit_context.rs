//! Where a request came from, for the audit log: the client's address, its user agent and the
//! request id ([`crate::middleware::request_id`]). Handlers of privileged writes take a
//! [`RequestMeta`] and turn it into the domain's [`AuditContext`] with the acting credential, or
//! take [`Acting`], which does both for a route served to API callers and members alike.

use std::future::{ready, Future, Ready};
use std::marker::PhantomData;
use std::pin::Pin;

use actix_web::dev::Payload;
use actix_web::http::header::USER_AGENT;
use actix_web::{FromRequest, HttpMessage, HttpRequest};
use domain::access::Actor;
use domain::audit::{AuditActor, AuditContext};
use domain::auth::LoginRequest;
use domain::workspace::WorkspaceId;

use crate::authentication::{Member, V1Caller};
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

    /// The context of a member acting.
    pub fn member(&self, user_id: domain::users::UserId, role: domain::users::Role) -> AuditContext {
        self.context(Actor::Member { user_id, role })
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

/// A caller acting in one workspace, whichever surface serves the route: [`V1Caller`] on `/v1`,
/// [`Member`] on the settings API. A handler generic over it serves both surfaces (the webhooks'
/// routes, registered once per surface by `routes.rs`).
pub trait WorkspaceCaller: FromRequest<Error = ApiError> + 'static {
    /// The workspace every query of the request is scoped to.
    fn workspace(&self) -> WorkspaceId;
    /// Who acts, for the audit log.
    fn actor(&self) -> Actor;
}

impl WorkspaceCaller for V1Caller {
    fn workspace(&self) -> WorkspaceId {
        self.workspace_id
    }

    fn actor(&self) -> Actor {
        self.principal.actor()
    }
}

impl WorkspaceCaller for Member {
    fn workspace(&self) -> WorkspaceId {
        self.workspace_id
    }

    fn actor(&self) -> Actor {
        Actor::Member { user_id: self.user_id, role: self.role }
    }
}

/// The caller's workspace and the audit context of its privileged write.
#[derive(Debug)]
pub struct Acting<C> {
    /// The caller's workspace.
    pub workspace: WorkspaceId,
    /// Who asks, from where.
    pub audit: AuditContext,
    caller: PhantomData<C>,
}

impl<C: WorkspaceCaller> FromRequest for Acting<C>
where
    C::Future: 'static,
{
    type Error = ApiError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, ApiError>>>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let meta = RequestMeta::of(req);
        let caller = C::from_request(req, payload);
        Box::pin(async move {
            let caller = caller.await?;
            Ok(Self { workspace: caller.workspace(), audit: meta.context(caller.actor()), caller: PhantomData })
        })
    }
}

//! The one shape of the `/v1` create, update and delete handlers: the caller's workspace and audit
//! context, the resource id from the path (updates, deletes) and the strict JSON body (creates,
//! updates), turned into the domain's raw input. The handler then calls one service method and maps
//! its result; the service validates the input and names every bad field.

use std::future::Future;
use std::pin::Pin;

use actix_web::dev::Payload;
use actix_web::{web, FromRequest, HttpRequest};
use domain::audit::AuditContext;
use domain::workspace::WorkspaceId;
use serde::de::DeserializeOwned;

use crate::audit_context::RequestMeta;
use crate::authentication::V1Caller;
use crate::strict::StrictJson;

/// A documented request body (its `ToSchema` is the OpenAPI one) and the domain input it carries.
pub trait RequestBody: DeserializeOwned + 'static {
    /// The domain's raw input.
    type Input;
    /// The input, field for field.
    fn into_input(self) -> Self::Input;
}

/// `POST /v1/<resource>`: the caller's workspace and the body's input.
#[derive(Debug)]
pub struct NewInput<B: RequestBody> {
    /// The caller's workspace.
    pub workspace: WorkspaceId,
    /// Who asks, from where: for the audit record of a privileged change.
    pub audit: AuditContext,
    /// The body, as the domain's input.
    pub input: B::Input,
}

/// `PATCH /v1/<resource>/{id}`: the caller's workspace, the id and the body's input.
#[derive(Debug)]
pub struct ChangeInput<B: RequestBody> {
    /// The caller's workspace.
    pub workspace: WorkspaceId,
    /// Who asks, from where: for the audit record of a privileged change.
    pub audit: AuditContext,
    /// The resource's id.
    pub id: i64,
    /// The body, as the domain's input.
    pub input: B::Input,
}

/// `DELETE /v1/<resource>/{id}`: the caller's workspace and audit context, and the id.
#[derive(Debug)]
pub struct Removal {
    /// The caller's workspace.
    pub workspace: WorkspaceId,
    /// Who asks, from where: for the audit record of a privileged change.
    pub audit: AuditContext,
    /// The resource's id.
    pub id: i64,
}

type Extracted<T> = Pin<Box<dyn Future<Output = Result<T, actix_web::Error>>>>;

impl<B: RequestBody> FromRequest for NewInput<B> {
    type Error = actix_web::Error;
    type Future = Extracted<Self>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        // Awaited in the order of a handler's arguments: credentials, then the body.
        let meta = RequestMeta::of(req);
        let caller = V1Caller::from_request(req, payload);
        let body = StrictJson::<B>::from_request(req, payload);
        Box::pin(async move {
            let caller = caller.await?;
            let audit = meta.context(caller.principal.actor());
            let StrictJson(body) = body.await?;
            Ok(Self { workspace: caller.workspace_id, audit, input: body.into_input() })
        })
    }
}

impl<B: RequestBody> FromRequest for ChangeInput<B> {
    type Error = actix_web::Error;
    type Future = Extracted<Self>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        // Awaited in the order of a handler's arguments: credentials, the path, then the body.
        let meta = RequestMeta::of(req);
        let caller = V1Caller::from_request(req, payload);
        let id = web::Path::<i64>::from_request(req, payload);
        let body = StrictJson::<B>::from_request(req, payload);
        Box::pin(async move {
            let caller = caller.await?;
            let audit = meta.context(caller.principal.actor());
            let id = id.await?.into_inner();
            let StrictJson(body) = body.await?;
            Ok(Self { workspace: caller.workspace_id, audit, id, input: body.into_input() })
        })
    }
}

impl FromRequest for Removal {
    type Error = actix_web::Error;
    type Future = Extracted<Self>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        // Awaited in the order of a handler's arguments: credentials, then the path.
        let meta = RequestMeta::of(req);
        let caller = V1Caller::from_request(req, payload);
        let id = web::Path::<i64>::from_request(req, payload);
        Box::pin(async move {
            let caller = caller.await?;
            let audit = meta.context(caller.principal.actor());
            let id = id.await?.into_inner();
            Ok(Self { workspace: caller.workspace_id, audit, id })
        })
    }
}

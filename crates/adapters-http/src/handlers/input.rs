//! The one shape of the `/v1` handlers: the caller's workspace and audit context, the resource id
//! from the path (gets, updates, deletes), the page asked for (listings) and the strict JSON body
//! (creates, updates), turned into the domain's raw input. The handler then calls one service
//! method and maps its result; the service validates the input and names every bad field.
//!
//! Each extractor reads its parts as a handler's arguments would be, and answers the first error
//! in the same order: credentials, then the path, then the query or the body.

use actix_web::dev::Payload;
use actix_web::{web, FromRequest, HttpRequest};
use domain::access::Caller;
use domain::audit::AuditContext;
use domain::common::page::PageRequest;
use domain::workspace::WorkspaceId;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer};

use super::PageQuery;
use crate::audit_context::RequestMeta;
use crate::authentication::Authenticated;
use crate::extract::{extract, Extracted};
use crate::strict::{StrictJson, StrictQuery};

/// A documented request body (its `ToSchema` is the OpenAPI one) and the domain input it carries.
pub trait RequestBody: DeserializeOwned + 'static {
    /// The domain's raw input (the body itself where the domain reads it through a value type,
    /// such as `ThreadChange::new`).
    type Input;
    /// The input, field for field.
    fn into_input(self) -> Self::Input;
}

/// For a field of a change: `Some(None)` for an explicit null, so that null (clear, unassign)
/// differs from absent (keep).
///
/// # Errors
/// The field's own deserialisation errors.
pub fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<Option<T>>, D::Error> {
    Option::<T>::deserialize(d).map(Some)
}

/// `GET /v1/<resource>/{id}`: the caller's workspace and the id.
#[derive(Debug)]
pub struct Lookup {
    /// The caller's workspace.
    pub workspace: WorkspaceId,
    /// The caller as the access policy sees it.
    pub caller: Caller,
    /// The resource's id.
    pub id: i64,
}

/// `GET /v1/<resource>` without filters: the caller's workspace and the page asked for.
#[derive(Debug)]
pub struct Listing {
    /// The caller's workspace.
    pub workspace: WorkspaceId,
    /// The caller as the access policy sees it.
    pub caller: Caller,
    /// The page size and position of [`PageQuery`], validated (422 naming `limit` or `cursor`).
    pub page: PageRequest,
}

/// `POST /v1/<resource>`: the caller's workspace and the body's input.
#[derive(Debug)]
pub struct NewInput<B: RequestBody> {
    /// The caller's workspace.
    pub workspace: WorkspaceId,
    /// The caller as the access policy sees it.
    pub caller: Caller,
    /// Who asks, from where: for the audit record of a privileged change.
    pub audit: AuditContext,
    /// The body, as the domain's input.
    pub input: B::Input,
}

/// `PATCH /v1/<resource>/{id}` (or `PUT` of a part of it): the caller's workspace, the id and the
/// body's input.
#[derive(Debug)]
pub struct ChangeInput<B: RequestBody> {
    /// The caller's workspace.
    pub workspace: WorkspaceId,
    /// The caller as the access policy sees it.
    pub caller: Caller,
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
    /// The caller as the access policy sees it.
    pub caller: Caller,
    /// Who asks, from where: for the audit record of a privileged change.
    pub audit: AuditContext,
    /// The resource's id.
    pub id: i64,
}

/// The part every extractor starts with: who asks, from where.
struct Asker {
    workspace: WorkspaceId,
    caller: Caller,
    audit: AuditContext,
}

impl FromRequest for Asker {
    type Error = actix_web::Error;
    type Future = Extracted<Self>;

    fn from_request(req: &HttpRequest, _payload: &mut Payload) -> Self::Future {
        let meta = RequestMeta::of(req);
        let caller = Authenticated::required(req);
        Box::pin(async move {
            let caller = caller?;
            Ok(Self { workspace: caller.workspace_id, caller, audit: meta.context(caller.actor) })
        })
    }
}

impl FromRequest for Lookup {
    type Error = actix_web::Error;
    type Future = Extracted<Self>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        extract(req, payload, |(a, id): (Asker, web::Path<i64>)| {
            Ok(Self { workspace: a.workspace, caller: a.caller, id: id.into_inner() })
        })
    }
}

impl FromRequest for Listing {
    type Error = actix_web::Error;
    type Future = Extracted<Self>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        extract(req, payload, |(a, StrictQuery(q)): (Asker, StrictQuery<PageQuery>)| {
            Ok(Self { workspace: a.workspace, caller: a.caller, page: q.request()? })
        })
    }
}

impl<B: RequestBody> FromRequest for NewInput<B> {
    type Error = actix_web::Error;
    type Future = Extracted<Self>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        extract(req, payload, |(a, StrictJson(body)): (Asker, StrictJson<B>)| {
            Ok(Self { workspace: a.workspace, caller: a.caller, audit: a.audit, input: body.into_input() })
        })
    }
}

impl<B: RequestBody> FromRequest for ChangeInput<B> {
    type Error = actix_web::Error;
    type Future = Extracted<Self>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        extract(req, payload, |(a, id, StrictJson(body)): (Asker, web::Path<i64>, StrictJson<B>)| {
            let (workspace, caller, audit, id) = (a.workspace, a.caller, a.audit, id.into_inner());
            Ok(Self { workspace, caller, audit, id, input: body.into_input() })
        })
    }
}

impl FromRequest for Removal {
    type Error = actix_web::Error;
    type Future = Extracted<Self>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        extract(req, payload, |(a, id): (Asker, web::Path<i64>)| {
            Ok(Self { workspace: a.workspace, caller: a.caller, audit: a.audit, id: id.into_inner() })
        })
    }
}

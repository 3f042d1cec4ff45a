//! The settings API for API keys (`/api/workspaces/{workspace_id}/api-keys`), for workspace
//! admins signed in with a login token or the settings session. The record is in
//! [`crate::dto::api_keys`].

pub mod create;
pub mod delete;
pub mod list;
pub mod revoke;
pub mod roll;

use actix_web::dev::Payload;
use actix_web::{web, FromRequest, HttpRequest};
use domain::api_keys::ApiKeyId;

use crate::audit_context::RequestMeta;
use crate::authentication::Authenticated;
use crate::dto::KeyChange;
use crate::extract::{extract, Extracted};

/// `…/api-keys/{key_id}` (revoke, roll, delete), from the member's credential.
impl FromRequest for KeyChange {
    type Error = actix_web::Error;
    type Future = Extracted<Self>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        extract(
            req,
            payload,
            |(Authenticated(caller), meta, path): (Authenticated, RequestMeta, web::Path<(i64, i64)>)| {
                Ok(Self { caller, audit: meta.context(caller.actor), key: ApiKeyId(path.into_inner().1) })
            },
        )
    }
}

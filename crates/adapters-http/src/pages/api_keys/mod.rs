//! `/settings/workspace/api-keys`: list, create and roll (the full key shown once), revoke and
//! delete.

pub mod create;
pub mod delete;
pub mod page;
pub mod revoke;
pub mod roll;
pub mod view;

use actix_web::dev::Payload;
use actix_web::{web, FromRequest, HttpRequest};
use domain::api_keys::ApiKeyId;

use crate::audit_context::RequestMeta;
use crate::dto::KeyChange;
use crate::extract::{extract, Extracted};
use crate::pages::session::{SessionForm, Signed};

/// The page's path.
pub const PATH: &str = "/settings/workspace/api-keys";

/// What a revocation or deletion of a key the workspace does not have shows.
const GONE: &str = "This API key does not exist (any more).";

/// The form of a key's button (revoke, delete), whose body is only its anti-forgery token.
#[derive(Debug)]
pub struct KeyForm(pub KeyChange);

impl FromRequest for KeyForm {
    type Error = actix_web::Error;
    type Future = Extracted<Self>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        extract(req, payload, |(s, meta, path, _): (Signed, RequestMeta, web::Path<(i64,)>, SessionForm)| {
            Ok(Self(KeyChange { audit: s.audit(&meta), caller: s.caller, key: ApiKeyId(path.0) }))
        })
    }
}

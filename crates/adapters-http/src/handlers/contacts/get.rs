//! `GET /v1/contacts/{contact_id}`

use actix_web::{web, HttpResponse};
use domain::contacts::Contact;

use crate::authentication::V1Caller;
use crate::error::ApiError;
use crate::state::AppState;

/// One contact of the workspace (an erased contact is not found).
#[utoipa::path(
    get,
    operation_id = "get_contact",
    path = "/v1/contacts/{contact_id}",
    tag = "contacts",
    params(("contact_id" = i64, Path, description = "Contact id")),
    responses((status = 200, description = "The contact", body = Contact))
)]
pub async fn get(caller: V1Caller, state: web::Data<AppState>, path: web::Path<i64>) -> Result<HttpResponse, ApiError> {
    let contact = state.contacts.get(caller.workspace_id, path.into_inner()).await?;
    Ok(HttpResponse::Ok().json(contact))
}

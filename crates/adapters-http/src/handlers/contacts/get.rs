//! `GET /v1/contacts/{contact_id}`

use actix_web::{web, HttpResponse};
use domain::contacts::Contact;

use crate::error::ApiError;
use crate::handlers::input::Lookup;
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
pub async fn get(state: web::Data<AppState>, req: Lookup) -> Result<HttpResponse, ApiError> {
    Ok(HttpResponse::Ok().json(state.contacts.get(req.workspace, req.id).await?))
}

//! `DELETE /v1/contacts/{contact_id}`

use actix_web::{web, HttpResponse};

use crate::error::ApiError;
use crate::handlers::input::Removal;
use crate::state::AppState;

/// Erases the person (GDPR art. 17), in one transaction: their personal fields and the content of
/// every message of their threads are cleared (content `""`), counts and analytics stay as they
/// were, and `contact.deleted` is emitted with the id only. The contact answers 404 afterwards,
/// everywhere; a later message from the same phone starts a new contact.
#[utoipa::path(
    delete,
    operation_id = "delete_contact",
    path = "/v1/contacts/{contact_id}",
    tag = "contacts",
    params(("contact_id" = i64, Path, description = "Contact id")),
    responses((status = 204, description = "Erased"))
)]
pub async fn delete(state: web::Data<AppState>, req: Removal) -> Result<HttpResponse, ApiError> {
    state.contacts.erase(req.workspace, req.id).await?;
    Ok(HttpResponse::NoContent().finish())
}

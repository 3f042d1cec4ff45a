//! `DELETE /v1/contacts/{contact_id}`

use actix_web::{web, HttpResponse};

use crate::error::ApiError;
use crate::handlers::input::Removal;
use crate::state::AppState;

/// Erases the person (GDPR art. 17), in one transaction: their personal fields (`country` too) and
/// the content of every message of their threads are cleared (content `""`), their still-queued
/// outbound messages fail with reason `erased`, the stored events about them are scrubbed (later
/// deliveries and replays carry the erased data), counts and analytics stay as they were,
/// `contact.deleted` is emitted with the id only and `contact.erased` is audited. Needs an admin
/// or a key with `contacts:erase`. The contact answers 404 afterwards, everywhere; a later message
/// from the same phone starts a new contact.
#[utoipa::path(
    delete,
    operation_id = "delete_contact",
    path = "/v1/contacts/{contact_id}",
    tag = "contacts",
    params(("contact_id" = i64, Path, description = "Contact id")),
    responses((status = 204, description = "Erased"))
)]
pub async fn delete(state: web::Data<AppState>, req: Removal) -> Result<HttpResponse, ApiError> {
    state.contacts.erase(req.workspace, &req.audit, req.id).await?;
    Ok(HttpResponse::NoContent().finish())
}

//! `PATCH /v1/contacts/{contact_id}`

use actix_web::{web, HttpResponse};
use domain::contacts::{Contact, ContactChangeInput};
use serde::Deserialize;
use utoipa::ToSchema;

use crate::error::ApiError;
use crate::handlers::input::{present, ChangeInput, RequestBody};
use crate::state::AppState;

/// Fields to change; omitted fields keep their value, null clears one (never the name, and never
/// both the phone and the e-mail).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateContactBody {
    /// The person's name, 1 to 200 characters.
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = String, min_length = 1, max_length = 200)]
    name: Option<Option<String>>,
    /// Phone number with its country prefix, or null.
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<String>)]
    phone: Option<Option<String>>,
    /// E-mail address, or null.
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<String>)]
    email: Option<Option<String>>,
    /// ISO 3166-1 alpha-2 country code, or null.
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<String>, pattern = "^[A-Za-z]{2}$")]
    country: Option<Option<String>>,
    /// Language tag, or null.
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<String>)]
    language: Option<Option<String>>,
    /// Note, or null.
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<String>, max_length = 5000)]
    note: Option<Option<String>>,
}

/// Changes a contact. Emits `contact.updated` when a value changed.
#[utoipa::path(
    patch,
    operation_id = "update_contact",
    path = "/v1/contacts/{contact_id}",
    tag = "contacts",
    params(("contact_id" = i64, Path, description = "Contact id")),
    request_body = UpdateContactBody,
    responses(
        (status = 200, description = "The contact", body = Contact),
        (status = 409, description = "Another contact has this phone or e-mail (`conflict`, the field in `errors`)", body = crate::error::Problem, content_type = "application/problem+json"),
    )
)]
pub async fn update(state: web::Data<AppState>, req: ChangeInput<UpdateContactBody>) -> Result<HttpResponse, ApiError> {
    let contact = state.contacts.update(req.workspace, req.id, req.input).await?;
    Ok(HttpResponse::Ok().json(contact))
}

impl RequestBody for UpdateContactBody {
    type Input = ContactChangeInput;
    fn into_input(self) -> ContactChangeInput {
        let Self { name, phone, email, country, language, note } = self;
        ContactChangeInput { name, phone, email, country, language, note }
    }
}

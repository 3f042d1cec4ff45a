//! `POST /v1/contacts`

use actix_web::{web, HttpResponse};
use domain::contacts::{Contact, ContactInput};
use serde::Deserialize;
use utoipa::ToSchema;

use crate::error::ApiError;
use crate::handlers::created;
use crate::handlers::input::{NewInput, RequestBody};
use crate::state::AppState;

/// A new contact: a phone or an e-mail is required.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateContactBody {
    /// The person's name, 1 to 200 characters.
    #[schema(min_length = 1, max_length = 200, example = "Ana Costa")]
    name: String,
    /// Phone number with its country prefix; stored in E.164. Unique in the workspace.
    #[schema(example = "+14155550123")]
    phone: Option<String>,
    /// E-mail address; stored lowercase. Unique in the workspace.
    #[schema(example = "ana@example.com")]
    email: Option<String>,
    /// ISO 3166-1 alpha-2 country code.
    #[schema(example = "BR", pattern = "^[A-Za-z]{2}$")]
    country: Option<String>,
    /// Language tag (`pt-BR`).
    #[schema(example = "pt-BR")]
    language: Option<String>,
    /// A note for the team, up to 5000 characters.
    #[schema(max_length = 5000)]
    note: Option<String>,
}

/// Creates a contact. Emits `contact.created`.
#[utoipa::path(
    post,
    operation_id = "create_contact",
    path = "/v1/contacts",
    tag = "contacts",
    request_body = CreateContactBody,
    responses(
        (status = 201, description = "The contact", body = Contact,
            headers(("Location" = String, description = "URL of the contact"))),
        (status = 409, description = "Another contact has this phone or e-mail (`conflict`, the field in `errors`)", body = crate::error::Problem, content_type = "application/problem+json"),
    )
)]
pub async fn create(state: web::Data<AppState>, req: NewInput<CreateContactBody>) -> Result<HttpResponse, ApiError> {
    let contact = state.contacts.create(req.workspace, req.input).await?;
    Ok(created(format!("/v1/contacts/{}", contact.id), contact))
}

impl RequestBody for CreateContactBody {
    type Input = ContactInput;
    fn into_input(self) -> ContactInput {
        let Self { name, phone, email, country, language, note } = self;
        ContactInput { name, phone, email, country, language, note }
    }
}

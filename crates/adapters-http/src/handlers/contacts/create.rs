//! `POST /v1/contacts`

use actix_web::http::header::LOCATION;
use actix_web::{web, HttpResponse};
use domain::contacts::{Contact, ContactInput};
use serde::Deserialize;
use utoipa::ToSchema;

use crate::authentication::V1Caller;
use crate::error::ApiError;
use crate::state::AppState;
use crate::strict::StrictJson;

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
pub async fn create(
    caller: V1Caller,
    state: web::Data<AppState>,
    StrictJson(body): StrictJson<CreateContactBody>,
) -> Result<HttpResponse, ApiError> {
    let input = ContactInput {
        name: body.name,
        phone: body.phone,
        email: body.email,
        country: body.country,
        language: body.language,
        note: body.note,
    };
    let contact = state.contacts.create(caller.workspace_id, input).await?;
    Ok(HttpResponse::Created().insert_header((LOCATION, format!("/v1/contacts/{}", contact.id))).json(contact))
}

//! `GET /v1/contacts`

use actix_web::{web, HttpResponse};
use domain::contacts::ListContactsInput;
use serde::Deserialize;
use utoipa::IntoParams;

use crate::authentication::Authenticated;
use crate::dto::ContactList;
use crate::error::ApiError;
use crate::state::AppState;
use crate::strict::StrictQuery;

/// Query of the contact listing; every filter given must match.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ListContactsQuery {
    /// Exactly this e-mail address (case-insensitive).
    #[param(example = "ana@example.com")]
    email: Option<String>,
    /// This phone number, in any notation with its country prefix (`+1 415 555-0123`, `0044…`);
    /// normalised to E.164 as the assistant's contact lookup does.
    #[param(example = "+14155550123")]
    phone: Option<String>,
    /// Names starting with this, case-insensitively.
    #[param(example = "ana")]
    q: Option<String>,
    /// Contacts with a thread carrying the label of this name; an unknown name is 422.
    label: Option<String>,
    /// Contacts changed at or after this time (RFC 3339).
    #[param(example = "2026-11-24T09:30:00Z")]
    updated_since: Option<String>,
    /// Page size, 1 to 100.
    #[param(minimum = 1, maximum = 100, default = 25)]
    limit: Option<i64>,
    /// `next_cursor` of the previous page of the same listing (same filters).
    cursor: Option<String>,
}

/// Lists the workspace's contacts, oldest first. Erased contacts are never listed.
#[utoipa::path(
    get,
    operation_id = "list_contacts",
    path = "/v1/contacts",
    tag = "contacts",
    params(ListContactsQuery),
    responses((status = 200, description = "A page of contacts", body = ContactList))
)]
pub async fn list(
    caller: Authenticated,
    state: web::Data<AppState>,
    StrictQuery(q): StrictQuery<ListContactsQuery>,
) -> Result<HttpResponse, ApiError> {
    let input = ListContactsInput {
        email: q.email,
        phone: q.phone,
        q: q.q,
        label: q.label,
        updated_since: q.updated_since,
        limit: q.limit,
        cursor: q.cursor,
    };
    let page = state.contacts.list(caller.workspace_id, input).await?;
    Ok(crate::handlers::listed(page))
}

//! `POST /settings/workspace/api-keys`: creates a key and shows it this once.

use actix_web::http::StatusCode;
use actix_web::{web, HttpResponse};
use domain::api_keys::{CreateApiKey, CreateApiKeyError};
use time::format_description::well_known::Iso8601;
use time::Date;

use super::page::load;
use super::view::{render, KeysView};
use crate::pages::session::{SessionForm, Signed};
use crate::pages::PageError;
use crate::state::AppState;

/// A date field (`2027-01-31`) as the end of that day in UTC, in RFC 3339.
fn end_of_day(raw: &str) -> Result<Option<String>, String> {
    if raw.is_empty() {
        return Ok(None);
    }
    Date::parse(raw, &Iso8601::DATE)
        .map(|d| Some(format!("{d}T23:59:59Z")))
        .map_err(|_| "Enter a date such as 2027-01-31, or leave it blank.".to_owned())
}

/// Creates the key; the response page carries the full key, once.
///
/// # Errors
/// [`PageError::Forbidden`] for agents, [`PageError::Csrf`] without the session's token.
pub async fn create(
    s: Signed,
    meta: crate::audit_context::RequestMeta,
    state: web::Data<AppState>,
    SessionForm(form): SessionForm,
) -> Result<HttpResponse, PageError> {
    let auth = &state.auth;
    let restricted = form.get("access") == Some("restricted");
    let mut v = KeysView {
        name: form.text("name"),
        expires: form.text("expires"),
        restricted,
        scopes: form.all("scope"),
        ..KeysView::default()
    };
    let status = match end_of_day(&v.expires) {
        Err(e) => {
            v.expires_error = Some(e);
            StatusCode::UNPROCESSABLE_ENTITY
        }
        Ok(expires_at) => {
            // Full access unless restricted is chosen (then an empty choice is refused).
            let scopes = restricted.then(|| v.scopes.clone());
            let cmd = CreateApiKey { name: v.name.clone(), expires_at, scopes };
            match state.api_keys.create(&s.caller, &s.audit(&meta), cmd).await {
                Ok(created) => {
                    v.created = Some((created.key.name.clone(), created.secret.secret));
                    v.name.clear();
                    v.expires.clear();
                    v.scopes.clear();
                    v.restricted = false;
                    StatusCode::CREATED
                }
                Err(CreateApiKeyError::Invalid(errors)) => {
                    for f in errors.0 {
                        if f.field == "expires_at" {
                            v.expires_error = Some(format!("The expiry date {}.", f.message));
                        } else if f.field == "scopes" {
                            v.scopes_error = Some(format!("Scopes: {}.", f.message));
                        } else {
                            v.name_error = Some(format!("The name {}.", f.message));
                        }
                    }
                    StatusCode::UNPROCESSABLE_ENTITY
                }
                // The page explains the plan instead of the form.
                Err(CreateApiKeyError::PlanRequired { .. }) => StatusCode::FORBIDDEN,
                Err(e @ CreateApiKeyError::Forbidden) => return Err(PageError::Forbidden(e.to_string())),
                Err(CreateApiKeyError::Unknown(e)) => return Err(e.into()),
            }
        }
    };
    load(&s, &state, None, &mut v).await?;
    Ok(render(&s, &v, auth.clock.now(), status))
}

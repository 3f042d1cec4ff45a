//! `POST /settings/workspace/api-keys/{key_id}/roll`: rolls a key and shows its successor once.

use actix_web::http::StatusCode;
use actix_web::{web, HttpResponse};
use domain::api_keys::{ApiKeyId, RollApiKey, RollApiKeyError};

use super::page::load;
use super::view::{render, KeysView};
use super::PATH;
use crate::audit_context::RequestMeta;
use crate::pages::session::{see_other_with_flash, SessionForm, Signed};
use crate::pages::PageError;
use crate::state::AppState;

/// Rolls the key with the grace chosen in its dialog (`grace_seconds`); the answer page carries
/// the successor in full, once. A refusal (revoked, expired, rolled already; a grace the form does
/// not offer) comes back as a notice on the list.
///
/// # Errors
/// [`PageError::Forbidden`] for agents and below `advanced`, [`PageError::NotFound`] for another workspace's key,
/// [`PageError::Csrf`] without the session's token.
pub async fn roll(
    s: Signed,
    meta: RequestMeta,
    state: web::Data<AppState>,
    path: web::Path<(i64,)>,
    SessionForm(form): SessionForm,
) -> Result<HttpResponse, PageError> {
    let grace_seconds = form.get("grace_seconds").and_then(|g| g.trim().parse::<i64>().ok());
    let id = ApiKeyId(path.into_inner().0);
    match state.api_keys.roll(&s.caller, &s.audit(&meta), id, RollApiKey { grace_seconds }).await {
        Ok(rolled) => {
            let mut v =
                KeysView { created: Some((rolled.new.name.clone(), rolled.secret.secret)), ..KeysView::default() };
            load(&s, &state, None, &mut v).await?;
            Ok(render(&s, &v, state.auth.clock.now(), StatusCode::CREATED))
        }
        Err(e @ (RollApiKeyError::Refused(_) | RollApiKeyError::Invalid(_))) => {
            Ok(see_other_with_flash(&state.pages, PATH, &format!("The key was not rolled: {e}.")))
        }
        Err(e @ (RollApiKeyError::Forbidden | RollApiKeyError::PlanRequired { .. })) => {
            Err(PageError::Forbidden(e.to_string()))
        }
        Err(RollApiKeyError::NotFound(_)) => Err(PageError::NotFound(super::GONE.into())),
        Err(RollApiKeyError::Unknown(e)) => Err(e.into()),
    }
}

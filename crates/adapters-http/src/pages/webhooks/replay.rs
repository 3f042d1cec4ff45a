//! `POST /settings/integrations/webhooks/{webhook_id}/replay`: the replay form.

use actix_web::{web, HttpResponse};
use domain::events::{ReplayError, ReplayInput};

use super::{back, detail_path, DestinationAction};
use crate::pages::PageError;
use crate::state::AppState;

/// A `datetime-local` value (`2026-11-24T08:00`, seconds optional) read as UTC, in RFC 3339.
fn utc(raw: &str) -> Option<String> {
    let raw = raw.trim();
    match raw.len() {
        0 => None,
        16 => Some(format!("{raw}:00Z")),
        _ if raw.ends_with('Z') || raw.contains('+') => Some(raw.to_owned()),
        _ => Some(format!("{raw}Z")),
    }
}

/// Queues the period's missed events again (`EventsService::replay`, as `POST …/replay`).
///
/// # Errors
/// [`PageError::NotFound`], [`PageError::Csrf`].
pub async fn replay(a: DestinationAction, state: web::Data<AppState>) -> Result<HttpResponse, PageError> {
    let typed = |field: &str| a.form.get(field).unwrap_or("").trim().to_owned();
    let (since, until) = (typed("since"), typed("until"));
    let input = ReplayInput {
        since: a.form.get("since").and_then(utc),
        until: a.form.get("until").and_then(utc),
        event_types: None,
    };
    let message = match state.events.replay(a.ws, &a.audit, a.id, &input).await {
        Ok(0) => "Nothing to replay: the destination has every event of that period.".to_owned(),
        Ok(1) => "1 event queued for delivery.".to_owned(),
        Ok(n) => format!("{n} events queued for delivery, oldest first."),
        Err(ReplayError::Invalid(v)) => {
            // In the form's words: the fields are "From" and "Until" on the page.
            let what: Vec<String> =
                v.0.iter()
                    .map(|f| {
                        let message = if f.message.starts_with("must be an RFC 3339 time") {
                            "must be a date and time (UTC)".to_owned()
                        } else {
                            f.message.replace("`since`", "From")
                        };
                        match f.field.as_str() {
                            "since" => format!("From {message}"),
                            "until" => format!("Until {message}"),
                            other => format!("{other} {message}"),
                        }
                    })
                    .collect();
            // Back to the form with what was typed in it.
            let query: String = form_urlencoded::Serializer::new(String::new())
                .append_pair("since", &since)
                .append_pair("until", &until)
                .finish();
            let location = format!("{}?{query}#replay-title", detail_path(a.id));
            return Ok(back(&state.pages, &location, &format!("Nothing replayed: {}.", what.join("; "))));
        }
        Err(ReplayError::NotFound) => {
            return Err(PageError::NotFound("This webhook destination does not exist (any more).".into()))
        }
        Err(ReplayError::Unknown(e)) => return Err(e.into()),
    };
    Ok(back(&state.pages, &detail_path(a.id), &message))
}

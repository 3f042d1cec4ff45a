//! `GET /analytics/daily.csv` and `GET /analytics/top-countries.csv`: the exports the assistant
//! cannot make (`docs/product/analytics-export.md`, "The assistant does not export").

use actix_web::http::header::{CacheControl, CacheDirective, ContentDisposition, DispositionParam, DispositionType};
use actix_web::{web, HttpResponse};
use domain::analytics::csv;
use domain::assistant::ChannelAnalytics;
use domain::channels::ChannelId;

use super::{figures, Selection};
use crate::pages::session::Signed;
use crate::pages::PageError;
use crate::state::AppState;

/// A CSV download named `name` (the reports page's export too).
pub(crate) fn file(name: String, body: String) -> HttpResponse {
    HttpResponse::Ok()
        .content_type("text/csv; charset=utf-8")
        .insert_header(CacheControl(vec![CacheDirective::Private, CacheDirective::NoStore]))
        .insert_header(ContentDisposition {
            disposition: DispositionType::Attachment,
            parameters: vec![DispositionParam::Filename(name)],
        })
        .body(body)
}

fn scope(channel: Option<ChannelId>) -> String {
    channel.map_or_else(|| "whatsapp".to_owned(), |c| format!("channel-{}", c.0))
}

/// The daily series of the selection, one row per day.
///
/// # Errors
/// [`PageError::NotFound`] for an unknown channel, [`PageError::BadRequest`] for a Messenger or
/// Instagram channel (no daily delivery series exists for them).
pub async fn daily(s: Signed, state: web::Data<AppState>, q: web::Query<Selection>) -> Result<HttpResponse, PageError> {
    let (channel, range) = (q.channel()?, q.range()?);
    match figures(&s, &state, channel, range).await? {
        ChannelAnalytics::Whatsapp { analytics, period, .. } => Ok(file(
            format!("wms-daily-{}-{}-{}-to-{}.csv", scope(channel), range.as_str(), period.from, period.to),
            csv::daily_series(&analytics),
        )),
        ChannelAnalytics::OtherPlatform { .. } => Err(PageError::BadRequest(
            "The daily delivery series exists for WhatsApp channels only; export the top countries instead.".into(),
        )),
    }
}

/// The top contact countries of the selection.
///
/// # Errors
/// [`PageError::NotFound`] for an unknown channel.
pub async fn countries(
    s: Signed,
    state: web::Data<AppState>,
    q: web::Query<Selection>,
) -> Result<HttpResponse, PageError> {
    let (channel, range) = (q.channel()?, q.range()?);
    let now = state.auth.clock.now();
    let t = state
        .pages
        .countries
        .top_countries(s.caller.workspace_id, channel, range.days(), now)
        .await?
        .ok_or_else(|| PageError::NotFound("This workspace has no such channel.".into()))?;
    Ok(file(
        format!("wms-top-countries-{}-{}-{}-to-{}.csv", scope(channel), range.as_str(), t.from, t.to),
        csv::top_countries(&t),
    ))
}

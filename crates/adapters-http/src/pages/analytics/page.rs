//! `GET /analytics`

use actix_web::{web, HttpResponse};
use domain::analytics::{AnalyticsRange, TopCountries};
use domain::assistant::{ChannelAnalytics, ChannelSummary, DeliveryCounts};
use domain::channels::{ChannelId, ChannelType};
use maud::{html, Markup};

use super::chart::combo_chart;
use super::{figures, Selection, PATH};
use crate::pages::layout::page;
use crate::pages::session::Signed;
use crate::pages::PageError;
use crate::state::AppState;

/// Countries shown on the page; the export has them all.
const COUNTRIES_SHOWN: usize = 10;

/// The figures of the selection.
///
/// # Errors
/// [`PageError::BadRequest`] for a bad selection, [`PageError::NotFound`] for another
/// workspace's channel.
pub async fn show(s: Signed, state: web::Data<AppState>, q: web::Query<Selection>) -> Result<HttpResponse, PageError> {
    let (channel, range) = (q.channel()?, q.range()?);
    let ws = s.caller.workspace_id;
    let channels = state.pages.live.channels(ws, None).await?;
    let result = figures(&s, &state, channel, range).await?;
    let now = state.auth.clock.now();
    let countries = state.pages.countries.top_countries(ws, channel, range.days(), now).await?;
    let body = html! {
        h1 { "Analytics" }
        p.lead { "How your WhatsApp messages perform: sent, delivered, read and failed per day, with delivery and read rates. "
            "Figures count outbound messages by the status they reached, on the day they were created." }
        (selector(&channels, channel, range))
        @match &result {
            ChannelAnalytics::Whatsapp { analytics, period, note, channel: asked, .. } => {
                @if let Some(note) = note { p.notice role="note" { (note) } }
                p.muted { "From " (period.from) " to " (period.to) " (" (period.time_zone) ")." }
                (totals(&analytics.totals, analytics.delivery_rate, analytics.read_rate))
                (combo_chart(&analytics.daily, &format!("Daily WhatsApp figures, {}, last {} days",
                    asked.as_ref().map_or("all WhatsApp channels", |c| c.display_name.as_str()), range.days())))
                div.actions {
                    a.button #export-daily href={ (PATH) "/daily.csv?" (Selection::query(channel, range)) } download { "Export daily series (CSV)" }
                    a.button.secondary #export-countries href={ (PATH) "/top-countries.csv?" (Selection::query(channel, range)) } download { "Export top countries (CSV)" }
                }
                details.card {
                    summary { "Daily figures as a table" }
                    div.table-wrap { table {
                        thead { tr { th { "Date" } th.num { "Sent" } th.num { "Delivered" } th.num { "Read" } th.num { "Failed" } th.num { "Delivery rate" } th.num { "Read rate" } } }
                        tbody { @for d in analytics.daily.iter().rev() { tr {
                            td { (d.date) } td.num { (d.counts.sent) } td.num { (d.counts.delivered) } td.num { (d.counts.read) }
                            td.num { (d.counts.failed) } td.num { (pct(d.delivery_rate)) } td.num { (pct(d.read_rate)) }
                        } } }
                    } }
                }
            }
            ChannelAnalytics::OtherPlatform { channel: other, note, .. } => {
                div.notice role="note" {
                    h2 { (other.display_name) " · " (other.channel_type.as_str()) }
                    p { (note) }
                    p { "For " (other.channel_type.as_str()) " channels, wms shows the contacts and messages by country below (and in the export). "
                        "Delivery and read statistics come from WhatsApp's status callbacks, which Messenger and Instagram do not provide in the same form." }
                    p { a #platform-insights href=(domain::assistant::MESSENGER_INSTAGRAM_DOCS) { "Where Meta shows Messenger and Instagram insights" } }
                }
                div.actions {
                    a.button.secondary #export-countries href={ (PATH) "/top-countries.csv?" (Selection::query(channel, range)) } download { "Export top countries (CSV)" }
                }
            }
        }
        (countries_table(countries.as_ref()))
    };
    Ok(HttpResponse::Ok()
        .content_type("text/html; charset=utf-8")
        .body(page("Analytics", PATH, &s, body).into_string()))
}

fn pct(r: Option<f64>) -> String {
    r.map_or_else(|| "–".to_owned(), |r| format!("{:.1}%", r * 100.0))
}

fn selector(channels: &[ChannelSummary], channel: Option<ChannelId>, range: AnalyticsRange) -> Markup {
    let (whatsapp, other): (Vec<&ChannelSummary>, Vec<&ChannelSummary>) =
        channels.iter().partition(|c| c.channel_type == ChannelType::Whatsapp);
    html! {
        form.card.row method="get" action=(PATH) aria-label="Selection" {
            div.field {
                label for="channel" { "Channel" }
                select #channel name="channel" data-autosubmit {
                    option value="all" selected[channel.is_none()] { "All WhatsApp channels" }
                    @if !whatsapp.is_empty() {
                        optgroup label="WhatsApp" {
                            @for c in &whatsapp { option value=(c.id.0) selected[channel == Some(c.id)] { (c.display_name) " (" (c.identifier) ")" } }
                        }
                    }
                    @if !other.is_empty() {
                        optgroup label="Messenger and Instagram" {
                            @for c in &other { option value=(c.id.0) selected[channel == Some(c.id)] { (c.display_name) " (" (c.channel_type.as_str()) ")" } }
                        }
                    }
                }
            }
            div.field {
                label for="range" { "Range" }
                select #range name="range" data-autosubmit {
                    @for r in AnalyticsRange::ALL {
                        option value=(r.as_str()) selected[r == range] { "Last " (r.days()) " days" }
                    }
                }
            }
            div.field { button type="submit" { "Show" } }
        }
    }
}

fn totals(t: &DeliveryCounts, delivery: Option<f64>, read: Option<f64>) -> Markup {
    html! {
        div.stats #totals {
            div.stat { div.value { (t.sent) } div.label { "Sent" } }
            div.stat { div.value { (t.delivered) } div.label { "Delivered" } }
            div.stat { div.value { (t.read) } div.label { "Read" } }
            div.stat { div.value { (t.failed) } div.label { "Failed" } }
            div.stat { div.value { (pct(delivery)) } div.label { "Delivery rate (delivered ÷ sent)" } }
            div.stat { div.value { (pct(read)) } div.label { "Read rate (read ÷ delivered)" } }
        }
    }
}

fn countries_table(t: Option<&TopCountries>) -> Markup {
    let rows = t.map(|t| t.rows.as_slice()).unwrap_or_default();
    html! {
        h2 { "Top countries" }
        p.muted { "By the country recorded on each contact. The export lists every country." }
        div.table-wrap { table #countries {
            thead { tr { th { "Country" } th.num { "Contacts" } th.num { "Inbound" } th.num { "Sent" } th.num { "Delivered" } th.num { "Read" } th.num { "Failed" } } }
            tbody {
                @for r in rows.iter().take(COUNTRIES_SHOWN) { tr {
                    td { (r.country.as_deref().unwrap_or("unknown")) } td.num { (r.contacts) } td.num { (r.inbound) }
                    td.num { (r.outbound.sent) } td.num { (r.outbound.delivered) } td.num { (r.outbound.read) } td.num { (r.outbound.failed) }
                } }
                @if rows.is_empty() { tr { td colspan="7" .muted { "No messages in this range." } } }
            }
        } }
    }
}

//! `GET /settings/workspace/reports`

use actix_web::http::header::{CacheControl, CacheDirective};
use actix_web::http::StatusCode;
use actix_web::{web, HttpResponse};
use domain::common::error::ValidationErrors;
use domain::reports::{
    ConversationReport, DistributionError, DurationFigure, FirstResponseDistribution, GroupBy, ReportError, ReportGroup,
};
use maud::{html, Markup};

use super::chart::{distribution_chart, groups_chart};
use super::{duration, Selection, CSV_PATH, PATH};
use crate::pages::layout::{field_error, invalid, page, time};
use crate::pages::session::Signed;
use crate::pages::PageError;
use crate::state::AppState;

/// What the page shows of a valid selection.
struct Figures {
    /// The whole workspace's figures (`group_by=none`).
    total: ConversationReport,
    /// The selection's groups (the total again for `group_by=none`).
    grouped: ConversationReport,
    distribution: FirstResponseDistribution,
}

fn invalid_query(e: ReportError) -> Result<ValidationErrors, PageError> {
    match e {
        ReportError::Invalid(v) => Ok(v),
        ReportError::Unknown(e) => Err(e.into()),
    }
}

async fn figures(s: &Signed, state: &AppState, q: &Selection) -> Result<Result<Figures, ValidationErrors>, PageError> {
    let ws = s.caller.workspace_id;
    let grouped = match state.pages.reports.conversations(ws, &q.raw()).await {
        Ok(r) => r,
        Err(e) => return Ok(Err(invalid_query(e)?)),
    };
    let total = if grouped.groups.len() == 1 && grouped.groups[0].key.is_none() {
        grouped.clone()
    } else {
        state.pages.reports.conversations(ws, &q.grouped(GroupBy::None.as_str())).await.map_err(|e| match e {
            ReportError::Invalid(v) => PageError::BadRequest(v.to_string()),
            ReportError::Unknown(e) => e.into(),
        })?
    };
    let distribution = state.pages.reports.first_response_distribution(ws, &q.raw()).await.map_err(|e| match e {
        DistributionError::Invalid(v) => PageError::BadRequest(v.to_string()),
        DistributionError::Unknown(e) => e.into(),
    })?;
    Ok(Ok(Figures { total, grouped, distribution }))
}

/// The report of the selection; a bad field is named beside it (422).
///
/// # Errors
/// Infrastructure failures.
pub async fn show(s: Signed, state: web::Data<AppState>, q: web::Query<Selection>) -> Result<HttpResponse, PageError> {
    let result = figures(&s, &state, &q).await?;
    let errors = result.as_ref().err();
    let body = html! {
        h1 { "Conversation reports" }
        p.lead { "How conversations went in a period: conversations started (a reopened conversation counts again), messages, resolutions, "
            "first response times of members and of AI agents, reply and resolution times, and SLA outcomes. "
            "A figure belongs to the period in which the response or resolution happened. "
            "With business hours, only time inside the workspace's business hours counts." }
        (selector(&q, errors))
        @match &result {
            Err(_) => { div.error-summary role="alert" { "The report could not be made: see the fields above." } }
            Ok(f) => { (report(&q, f)) }
        }
    };
    let status = if result.is_ok() { StatusCode::OK } else { StatusCode::UNPROCESSABLE_ENTITY };
    Ok(HttpResponse::build(status)
        .insert_header(CacheControl(vec![CacheDirective::Private, CacheDirective::NoStore]))
        .content_type("text/html; charset=utf-8")
        .body(page("Reports", PATH, &s, body).into_string()))
}

fn error_of<'a>(errors: Option<&'a ValidationErrors>, field: &str) -> Option<&'a str> {
    errors.and_then(|e| e.0.iter().find(|f| f.field == field)).map(|f| f.message.as_str())
}

fn group_label(g: GroupBy) -> &'static str {
    match g {
        GroupBy::None => "Whole workspace",
        GroupBy::Agent => "Member",
        GroupBy::Team => "Team",
        GroupBy::Label => "Label",
        GroupBy::Channel => "Channel",
    }
}

fn selector(q: &Selection, errors: Option<&ValidationErrors>) -> Markup {
    let raw = q.raw();
    let group_by = raw.group_by.as_deref().unwrap_or("none");
    let business = raw.business_hours.as_deref() == Some("true");
    let field = |id: &str, label: &str, hint: &str, value: Option<&str>| {
        let error = error_of(errors, id);
        html! {
            div.field {
                label for=(id) { (label) " " span.hint { (hint) } }
                input id=(id) type="date" name=(id) value=[value] aria-invalid=[invalid(error)]
                    aria-describedby=[error.map(|_| format!("{id}-error"))];
                (field_error(id, error))
            }
        }
    };
    let group_error = error_of(errors, "group_by");
    let bh_error = error_of(errors, "business_hours");
    html! {
        form.card.row #report-selection method="get" action=(PATH) aria-label="Selection" novalidate {
            (field("since", "From", "(inclusive; empty: 30 days before the end)", raw.since.as_deref()))
            (field("until", "Until", "(exclusive, midnight UTC; empty: now)", raw.until.as_deref()))
            div.field {
                label for="group_by" { "Group by" }
                select #group_by name="group_by" data-autosubmit aria-invalid=[invalid(group_error)] {
                    @for g in GroupBy::ALL {
                        option value=(g.as_str()) selected[g.as_str() == group_by] { (group_label(g)) }
                    }
                }
                (field_error("group_by", group_error))
            }
            div.field {
                label.inline for="business_hours" {
                    input #business_hours type="checkbox" name="business_hours" value="true" checked[business];
                    "Business hours only"
                }
                (field_error("business_hours", bh_error))
            }
            div.field { button type="submit" { "Show" } }
        }
    }
}

fn report(q: &Selection, f: &Figures) -> Markup {
    let t = f.total.groups.first().cloned().unwrap_or_else(|| ReportGroup::empty(None));
    let grouped = f.grouped.groups.len() != 1 || f.grouped.groups[0].key.is_some();
    html! {
        p.muted #period {
            "From " (time(f.total.since)) " to " (time(f.total.until)) "; "
            @if f.total.business_hours { "business hours only." } @else { "every hour counts." }
        }
        div.stats #summary {
            div.stat data-figure="conversations" { div.value { (t.conversations) } div.label { "Conversations" } }
            div.stat data-figure="incoming_messages" { div.value { (t.incoming_messages) } div.label { "Incoming messages" } }
            div.stat data-figure="outgoing_messages" { div.value { (t.outgoing_messages) } div.label { "Outgoing messages" } }
            div.stat data-figure="resolutions" { div.value { (t.resolutions) } div.label { "Resolutions" } }
            div.stat data-figure="sla_hit" { div.value { (t.sla.hit) } div.label { "SLAs hit" } }
            div.stat data-figure="sla_missed" { div.value { (t.sla.missed) } div.label { "SLAs missed" } }
        }
        div.table-wrap { table #durations {
            thead { tr { th { "Time" } th.num { "Count" } th.num { "Average" } th.num { "Median" } th.num { "90th percentile" } } }
            tbody {
                @for (key, label, fig) in [
                    ("first_response", "First response (members)", &t.first_response),
                    ("first_response_ai", "First response (AI agents)", &t.first_response_ai),
                    ("reply", "Reply", &t.reply),
                    ("resolution", "Resolution", &t.resolution),
                ] {
                    tr data-figure=(key) {
                        td { (label) }
                        td.num { (fig.count) }
                        td.num { (opt(fig.avg.map(|a| a.round() as i64))) }
                        td.num { (opt(fig.median)) }
                        td.num { (opt(fig.p90)) }
                    }
                }
            }
        } }
        div.actions {
            a.button #export-csv href={ (CSV_PATH) "?" (q.query()) } download { "Download as CSV" }
        }
        h2 { "First response time distribution" }
        (distribution_chart(&f.distribution))
        details.card {
            summary { "The distribution as a table" }
            div.table-wrap { table #distribution {
                thead { tr { th { "First response within" } th.num { "Members" } th.num { "AI agents" } } }
                tbody { @for b in &f.distribution.buckets {
                    tr data-bucket=(b.label) { td { (b.label) } td.num.human { (b.human) } td.num.ai { (b.ai) } }
                } }
            } }
        }
        h2 { "Per group" }
        div.table-wrap { table #groups {
            thead { tr {
                th { "Group" } th.num { "Conversations" } th.num { "Incoming" } th.num { "Outgoing" } th.num { "Resolutions" }
                th.num { "First response (members), median / p90" } th.num { "First response (AI), median / p90" }
                th.num { "Reply, median / p90" } th.num { "Resolution, median / p90" } th.num { "SLA hit" } th.num { "SLA missed" }
            } }
            tbody {
                @for g in &f.grouped.groups {
                    tr data-key=[g.key.as_ref().map(|k| format!("{}:{}", k.kind, k.id))] {
                        td { (group_name(g)) }
                        td.num { (g.conversations) } td.num { (g.incoming_messages) } td.num { (g.outgoing_messages) } td.num { (g.resolutions) }
                        td.num { (pair(&g.first_response)) } td.num { (pair(&g.first_response_ai)) }
                        td.num { (pair(&g.reply)) } td.num { (pair(&g.resolution)) }
                        td.num { (g.sla.hit) } td.num { (g.sla.missed) }
                    }
                }
                @if f.grouped.groups.is_empty() { tr { td colspan="11" .muted { "No figures in this period." } } }
            }
        } }
        @if grouped && !f.grouped.groups.is_empty() { (groups_chart(&f.grouped.groups)) }
    }
}

/// A group's name on the page: the whole workspace, or its kind and name.
pub fn group_name(g: &ReportGroup) -> String {
    match &g.key {
        None => "All conversations".to_owned(),
        Some(k) if k.name.is_empty() => format!("{} {}", k.kind, k.id),
        Some(k) => k.name.clone(),
    }
}

fn opt(v: Option<i64>) -> String {
    v.map_or_else(|| "–".to_owned(), duration)
}

fn pair(f: &DurationFigure) -> String {
    match (f.median, f.p90) {
        (Some(m), Some(p)) => format!("{} / {}", duration(m), duration(p)),
        _ => "–".to_owned(),
    }
}

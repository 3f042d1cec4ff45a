//! `/settings/workspace/audit-log`: the workspace's audit log for admins (the route's entry,
//! `audit.read`, decides who sees it): newest first, filtered by a GET form, one page at a time.

use actix_web::http::header::{CacheControl, CacheDirective};
use actix_web::http::StatusCode;
use actix_web::{web, HttpResponse};
use domain::audit::{ActorType, AuditAction, AuditEvent, AuditService};
use maud::{html, Markup};

use super::layout::{page, time};
use super::session::Signed;
use super::PageError;
use crate::handlers::audit_events::list::ListAuditEventsQuery;
use crate::state::AppState;

/// The page's path.
pub const PATH: &str = "/settings/workspace/audit-log";

/// The filter form's fields, as typed (`?action=&actor_type=&since=&until=&cursor=`).
#[derive(Debug, Default, serde::Deserialize)]
pub struct AuditLogQuery {
    action: Option<String>,
    actor_type: Option<String>,
    since: Option<String>,
    until: Option<String>,
    cursor: Option<String>,
}

/// `GET`: one page of the log.
///
/// # Errors
/// Infrastructure failures.
pub async fn show(
    s: Signed,
    state: web::Data<AppState>,
    q: web::Query<AuditLogQuery>,
) -> Result<HttpResponse, PageError> {
    let q = q.into_inner();
    let query = ListAuditEventsQuery {
        action: q.action.clone(),
        actor_type: q.actor_type.clone(),
        since: q.since.clone(),
        until: q.until.clone(),
        limit: Some(50),
        cursor: q.cursor.clone(),
    };
    let (events, next, errors, status) = match query.parse() {
        Ok((filter, page)) => {
            let listed = AuditService::new(state.auth.audit.clone()).list(s.caller.workspace_id, &filter, page).await?;
            (listed.data, listed.next_cursor, Vec::new(), StatusCode::OK)
        }
        Err(e) => {
            let errors = e.0.into_iter().map(|f| format!("{}: {}.", f.field, f.message)).collect();
            (Vec::new(), None, errors, StatusCode::UNPROCESSABLE_ENTITY)
        }
    };
    let body = html! {
        h1 { "Audit log" }
        p.lead { "Who did what in this workspace, from where: API keys, members, webhooks, channels, sign-ins and plan changes. Newest first. Secrets are never recorded." }
        @if !errors.is_empty() {
            div.error-summary role="alert" {
                p { "Check the filters:" }
                ul { @for e in &errors { li { (e) } } }
            }
        }
        (filters(&q))
        (table(&events))
        @if let Some(c) = &next {
            p { a href=(next_link(&q, c)) { "Older records →" } }
        }
    };
    Ok(HttpResponse::build(status)
        .insert_header(CacheControl(vec![CacheDirective::NoStore]))
        .content_type("text/html; charset=utf-8")
        .body(page("Audit log", PATH, &s, body).into_string()))
}

fn next_link(q: &AuditLogQuery, cursor: &str) -> String {
    let mut pairs = url::form_urlencoded::Serializer::new(String::new());
    for (k, v) in [("action", &q.action), ("actor_type", &q.actor_type), ("since", &q.since), ("until", &q.until)] {
        if let Some(v) = v.as_deref().filter(|v| !v.is_empty()) {
            pairs.append_pair(k, v);
        }
    }
    pairs.append_pair("cursor", cursor);
    format!("{PATH}?{}", pairs.finish())
}

fn filters(q: &AuditLogQuery) -> Markup {
    let action = q.action.as_deref().unwrap_or("");
    let actor = q.actor_type.as_deref().unwrap_or("");
    html! {
        form.card method="get" action=(PATH) {
            h2 { "Filter" }
            div.row {
                div.field {
                    label for="audit-action" { "Action" }
                    select #audit-action name="action" {
                        option value="" selected[action.is_empty()] { "Any action" }
                        @for a in AuditAction::ALL {
                            option value=(a.as_str()) selected[action == a.as_str()] { (a.as_str()) }
                        }
                    }
                }
                div.field {
                    label for="audit-actor" { "Actor" }
                    select #audit-actor name="actor_type" {
                        option value="" selected[actor.is_empty()] { "Anyone" }
                        @for t in ActorType::ALL {
                            option value=(t.as_str()) selected[actor == t.as_str()] { (t.as_str()) }
                        }
                    }
                }
                div.field {
                    label for="audit-since" { "Since " span.muted { "(RFC 3339)" } }
                    input #audit-since type="text" name="since" value=(q.since.as_deref().unwrap_or(""))
                        placeholder="2026-11-01T00:00:00Z";
                }
                div.field {
                    label for="audit-until" { "Until " span.muted { "(RFC 3339)" } }
                    input #audit-until type="text" name="until" value=(q.until.as_deref().unwrap_or(""))
                        placeholder="2026-12-01T00:00:00Z";
                }
            }
            button type="submit" { "Apply" }
        }
    }
}

fn actor(e: &AuditEvent) -> String {
    match (&e.actor_label, e.actor_id) {
        (Some(label), _) => format!("{label} ({})", e.actor_type),
        (None, Some(id)) => format!("{} {id}", e.actor_type),
        (None, None) => e.actor_type.clone(),
    }
}

/// `name: ci · masked_key: wmsk_…abcd`: readable, and it wraps.
fn details(d: &serde_json::Value) -> String {
    let value = |v: &serde_json::Value| match v {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Array(a) => {
            a.iter().map(|x| x.as_str().map_or_else(|| x.to_string(), str::to_owned)).collect::<Vec<_>>().join(", ")
        }
        other => other.to_string(),
    };
    match d {
        serde_json::Value::Object(m) => m
            .iter()
            .filter(|(_, v)| !v.is_null())
            .map(|(k, v)| format!("{k}: {}", value(v)))
            .collect::<Vec<_>>()
            .join(" · "),
        other => value(other),
    }
}

fn table(events: &[AuditEvent]) -> Markup {
    html! {
        @if events.is_empty() {
            p.muted { "No records match." }
        } @else {
            div.table-wrap {
                table {
                    caption.visually-hidden { "Audit records, newest first" }
                    thead { tr {
                        th scope="col" { "When" } th scope="col" { "Action" } th scope="col" { "Actor" }
                        th scope="col" { "Target" } th scope="col" { "Address" } th scope="col" { "Details" }
                    } }
                    tbody {
                        @for e in events {
                            tr data-audit-id=(e.id) {
                                td { (time(e.occurred_at)) }
                                td { code { (e.action) } }
                                td { (actor(e)) }
                                td { (e.target_type.as_deref().unwrap_or("")) @if let Some(id) = e.target_id { " " (id) } }
                                td { (e.ip.as_deref().unwrap_or("")) }
                                td { (details(&e.details)) }
                            }
                        }
                    }
                }
            }
        }
    }
}

//! `/settings/workspace/sla-policies`: the workspace's SLA policies, in the order they are tried
//! (by id), with a form to create one, a form per policy to change it and a confirmed delete. The
//! forms go through the same service as `/v1/sla-policies` (validation, the workspace's channels
//! and labels, the audit entries `sla_policy.created|updated|deleted`); a refused field is named
//! beside it. The route entries decide who may (`sla_policies.manage`).

use std::collections::BTreeMap;

use actix_web::http::header::{CacheControl, CacheDirective};
use actix_web::http::StatusCode;
use actix_web::{web, HttpResponse};
use domain::assistant::ChannelSummary;
use domain::common::page::PageRequest;
use domain::sla::{
    CreateSlaPolicyError, DeleteSlaPolicyError, SlaPolicy, SlaPolicyChangeInput, SlaPolicyInput, UpdateSlaPolicyError,
};
use maud::{html, Markup};
use serde::Deserialize;

use super::form::FormData;
use super::layout::{confirm_dialog, confirm_link, csrf, field_error, invalid, page, time};
use super::session::{see_other_with_flash, SessionForm, Signed};
use super::PageError;
use crate::state::AppState;

/// The page's path.
pub const PATH: &str = "/settings/workspace/sla-policies";

/// The target fields, as the API names them, with their labels.
const TARGETS: [(&str, &str); 3] = [
    ("first_response_seconds", "First response"),
    ("next_response_seconds", "Next response"),
    ("resolution_seconds", "Resolution"),
];

/// What a policy form holds, as text.
#[derive(Debug, Default, Clone)]
struct Entered {
    name: String,
    targets: [String; 3],
    business_hours: bool,
    channel_ids: Vec<i64>,
    labels: String,
}

/// A refused form: which one (`None`: the new policy's), what was entered, the errors by field.
#[derive(Debug, Default)]
struct Refused {
    policy_id: Option<i64>,
    entered: Entered,
    errors: BTreeMap<String, String>,
}

impl Refused {
    fn add(&mut self, field: &str, message: String) {
        self.errors.entry(field.to_owned()).and_modify(|m| m.push_str(&format!("; {message}"))).or_insert(message);
    }
}

/// A target for people and for the form: `90s`, `30m`, `4h`, `2d` (the largest whole unit).
fn target_text(seconds: Option<i64>) -> String {
    match seconds {
        None => String::new(),
        Some(s) if s % 86_400 == 0 => format!("{}d", s / 86_400),
        Some(s) if s % 3600 == 0 => format!("{}h", s / 3600),
        Some(s) if s % 60 == 0 => format!("{}m", s / 60),
        Some(s) => format!("{s}s"),
    }
}

/// A target as typed: empty (not measured), seconds, or a number with `s`, `m`, `h` or `d`.
fn parse_target(raw: &str) -> Result<Option<i64>, ()> {
    let raw = raw.trim();
    if raw.is_empty() {
        return Ok(None);
    }
    let (number, unit) = match raw.char_indices().find(|(_, c)| !c.is_ascii_digit() && *c != '-') {
        Some((at, _)) => (&raw[..at], raw[at..].trim()),
        None => (raw, "s"),
    };
    let n: i64 = number.trim().parse().map_err(|_| ())?;
    let factor = match unit {
        "s" => 1,
        "m" | "min" => 60,
        "h" => 3600,
        "d" => 86_400,
        _ => return Err(()),
    };
    n.checked_mul(factor).map(Some).ok_or(())
}

impl Entered {
    fn of(p: &SlaPolicy) -> Self {
        Self {
            name: p.name.clone(),
            targets: [p.targets.first_response, p.targets.next_response, p.targets.resolution].map(target_text),
            business_hours: p.business_hours,
            channel_ids: p.channel_ids.clone(),
            labels: p.labels.join(", "),
        }
    }

    fn from_form(form: &FormData) -> Self {
        Self {
            name: form.text("name"),
            targets: TARGETS.map(|(field, _)| form.text(field)),
            business_hours: form.get("business_hours") == Some("true"),
            channel_ids: form.all("channel_ids").iter().filter_map(|c| c.trim().parse().ok()).collect(),
            labels: form.text("labels"),
        }
    }

    fn labels(&self) -> Vec<String> {
        self.labels.split(',').map(str::trim).filter(|l| !l.is_empty()).map(str::to_owned).collect()
    }

    /// The targets in seconds; a refused one is named in `refused`.
    fn targets(&self, refused: &mut Refused) -> [Option<i64>; 3] {
        let mut out = [None; 3];
        for (i, (field, _)) in TARGETS.iter().enumerate() {
            match parse_target(&self.targets[i]) {
                Ok(t) => out[i] = t,
                Err(()) => {
                    refused.add(field, "enter a duration such as 90s, 30m, 4h or 2d, or leave it empty".to_owned())
                }
            }
        }
        out
    }
}

async fn listing(s: &Signed, state: &AppState) -> Result<(Vec<SlaPolicy>, Vec<ChannelSummary>), PageError> {
    let ws = s.caller.workspace_id;
    let page = PageRequest::new(Some(100), None).map_err(|_| PageError::BadRequest("invalid page".into()))?;
    let policies = state.sla_policies.list(ws, page).await?.data;
    let channels = state.pages.live.channels(ws, None).await?;
    Ok((policies, channels))
}

/// `?confirm=` (the delete dialog without JavaScript)
#[derive(Debug, Default, Deserialize)]
pub struct Confirm {
    confirm: Option<String>,
}

/// `GET`: the policies and the forms.
///
/// # Errors
/// Infrastructure failures.
pub async fn show(s: Signed, state: web::Data<AppState>, q: web::Query<Confirm>) -> Result<HttpResponse, PageError> {
    let (policies, channels) = listing(&s, &state).await?;
    Ok(render(&s, &policies, &channels, None, q.confirm.as_deref(), StatusCode::OK))
}

async fn refused(s: &Signed, state: &AppState, r: &Refused) -> Result<HttpResponse, PageError> {
    let (policies, channels) = listing(s, state).await?;
    Ok(render(s, &policies, &channels, Some(r), None, StatusCode::UNPROCESSABLE_ENTITY))
}

fn field_errors(r: &mut Refused, errors: domain::ValidationErrors) {
    for f in errors.0 {
        r.add(&f.field, f.message);
    }
}

/// `POST`: creates a policy.
///
/// # Errors
/// Infrastructure failures.
pub async fn create(
    s: Signed,
    meta: crate::audit_context::RequestMeta,
    state: web::Data<AppState>,
    SessionForm(form): SessionForm,
) -> Result<HttpResponse, PageError> {
    let entered = Entered::from_form(&form);
    let mut r = Refused { policy_id: None, entered: entered.clone(), ..Refused::default() };
    let [first, next, resolution] = entered.targets(&mut r);
    if !r.errors.is_empty() {
        return refused(&s, &state, &r).await;
    }
    let input = SlaPolicyInput {
        name: entered.name.clone(),
        first_response_seconds: first,
        next_response_seconds: next,
        resolution_seconds: resolution,
        business_hours: Some(entered.business_hours),
        channel_ids: Some(entered.channel_ids.clone()),
        labels: Some(entered.labels()),
    };
    match state.sla_policies.create(s.caller.workspace_id, &s.audit(&meta), input).await {
        Ok(p) => Ok(see_other_with_flash(&state.pages, PATH, &format!("The SLA policy {} was created.", p.name))),
        Err(CreateSlaPolicyError::Invalid(v)) => {
            field_errors(&mut r, v);
            refused(&s, &state, &r).await
        }
        Err(e @ CreateSlaPolicyError::UnknownChannels(_)) => {
            r.add("channel_ids", e.to_string());
            refused(&s, &state, &r).await
        }
        Err(e @ CreateSlaPolicyError::UnknownLabels(_)) => {
            r.add("labels", e.to_string());
            refused(&s, &state, &r).await
        }
        Err(CreateSlaPolicyError::Unknown(e)) => Err(e.into()),
    }
}

/// `POST /{policy_id}`: changes a policy to what its form holds.
///
/// # Errors
/// [`PageError::NotFound`] for a policy outside the workspace; infrastructure failures.
pub async fn update(
    s: Signed,
    meta: crate::audit_context::RequestMeta,
    state: web::Data<AppState>,
    path: web::Path<(i64,)>,
    SessionForm(form): SessionForm,
) -> Result<HttpResponse, PageError> {
    let id = path.0;
    let entered = Entered::from_form(&form);
    let mut r = Refused { policy_id: Some(id), entered: entered.clone(), ..Refused::default() };
    let [first, next, resolution] = entered.targets(&mut r);
    if !r.errors.is_empty() {
        return refused(&s, &state, &r).await;
    }
    let input = SlaPolicyChangeInput {
        name: Some(entered.name.clone()),
        first_response_seconds: Some(first),
        next_response_seconds: Some(next),
        resolution_seconds: Some(resolution),
        business_hours: Some(entered.business_hours),
        channel_ids: Some(entered.channel_ids.clone()),
        labels: Some(entered.labels()),
    };
    match state.sla_policies.update(s.caller.workspace_id, &s.audit(&meta), id, input).await {
        Ok(p) => Ok(see_other_with_flash(&state.pages, PATH, &format!("The SLA policy {} was saved.", p.name))),
        Err(UpdateSlaPolicyError::Invalid(v)) => {
            field_errors(&mut r, v);
            refused(&s, &state, &r).await
        }
        Err(e @ UpdateSlaPolicyError::UnknownChannels(_)) => {
            r.add("channel_ids", e.to_string());
            refused(&s, &state, &r).await
        }
        Err(e @ UpdateSlaPolicyError::UnknownLabels(_)) => {
            r.add("labels", e.to_string());
            refused(&s, &state, &r).await
        }
        Err(UpdateSlaPolicyError::NotFound(_)) => {
            Err(PageError::NotFound("This SLA policy does not exist (any more).".into()))
        }
        Err(UpdateSlaPolicyError::Unknown(e)) => Err(e.into()),
    }
}

/// `POST /{policy_id}/delete` (after the confirmation dialog).
///
/// # Errors
/// [`PageError::NotFound`] for a policy outside the workspace; infrastructure failures.
pub async fn delete(
    s: Signed,
    meta: crate::audit_context::RequestMeta,
    state: web::Data<AppState>,
    path: web::Path<(i64,)>,
    SessionForm(_): SessionForm,
) -> Result<HttpResponse, PageError> {
    match state.sla_policies.delete(s.caller.workspace_id, &s.audit(&meta), path.0).await {
        Ok(()) => Ok(see_other_with_flash(&state.pages, PATH, "The SLA policy was deleted.")),
        Err(DeleteSlaPolicyError::NotFound(_)) => {
            Err(PageError::NotFound("This SLA policy does not exist (any more).".into()))
        }
        Err(DeleteSlaPolicyError::Unknown(e)) => Err(e.into()),
    }
}

fn policy_form(s: &Signed, id: Option<i64>, e: &Entered, channels: &[ChannelSummary], r: Option<&Refused>) -> Markup {
    let prefix = id.map_or_else(|| "new".to_owned(), |id| format!("policy-{id}"));
    let action = id.map_or_else(|| PATH.to_owned(), |id| format!("{PATH}/{id}"));
    let error = |field: &str| r.and_then(|r| r.errors.get(field)).map(String::as_str);
    let fid = |field: &str| format!("{prefix}-{field}");
    let described = |field: &str| error(field).map(|_| format!("{prefix}-{field}-error"));
    html! {
        form.sla-policy method="post" action=(action) novalidate {
            (csrf(s))
            div.row {
                div.field {
                    label for=(fid("name")) { "Name" }
                    input id=(fid("name")) type="text" name="name" value=(e.name) maxlength="100"
                        aria-invalid=[invalid(error("name"))] aria-describedby=[described("name")];
                    (field_error(&fid("name"), error("name")))
                }
                @for (i, (field, label)) in TARGETS.iter().enumerate() {
                    div.field {
                        label for=(fid(field)) { (label) " " span.hint { "(such as 30m, 4h, 2d; empty: none)" } }
                        input id=(fid(field)) type="text" name=(field) value=(e.targets[i])
                            aria-invalid=[invalid(error(field))] aria-describedby=[described(field)];
                        (field_error(&fid(field), error(field)))
                    }
                }
            }
            div.field {
                label.inline for=(fid("business_hours")) {
                    input id=(fid("business_hours")) type="checkbox" name="business_hours" value="true" checked[e.business_hours];
                    "Count only business hours"
                }
            }
            fieldset aria-describedby=[described("channel_ids")] {
                legend { "Channels " span.hint { "(none checked: every channel)" } }
                (field_error(&fid("channel_ids"), error("channel_ids")))
                div.checks {
                    @for c in channels {
                        label { input type="checkbox" name="channel_ids" value=(c.id.0) checked[e.channel_ids.contains(&c.id.0)];
                            (c.display_name) " " span.muted { "(" (c.channel_type.as_str()) ")" } }
                    }
                    @if channels.is_empty() { span.muted { "This workspace has no channels yet." } }
                }
            }
            div.field {
                label for=(fid("labels")) { "Labels " span.hint { "(names, separated by commas; empty: every conversation)" } }
                input id=(fid("labels")) type="text" name="labels" value=(e.labels)
                    aria-invalid=[invalid(error("labels"))] aria-describedby=[described("labels")];
                (field_error(&fid("labels"), error("labels")))
            }
            button type="submit" { @if id.is_some() { "Save policy" } @else { "Create policy" } }
        }
    }
}

fn targets_summary(p: &SlaPolicy) -> String {
    let parts: Vec<String> = [
        ("first response", p.targets.first_response),
        ("next response", p.targets.next_response),
        ("resolution", p.targets.resolution),
    ]
    .iter()
    .filter_map(|(name, t)| t.map(|t| format!("{name} {}", target_text(Some(t)))))
    .collect();
    parts.join(", ")
}

fn render(
    s: &Signed,
    policies: &[SlaPolicy],
    channels: &[ChannelSummary],
    refused: Option<&Refused>,
    confirm: Option<&str>,
    status: StatusCode,
) -> HttpResponse {
    let new_refused = refused.filter(|r| r.policy_id.is_none());
    let new_entered = new_refused.map(|r| r.entered.clone()).unwrap_or_default();
    let body = html! {
        h1 { "SLA policies" }
        p.lead { "Service level targets for conversations: the first response, the next response to a contact who writes again, and the resolution. "
            "When a conversation starts, the first policy (by creation) whose channels and labels match it applies; empty lists match every conversation. "
            "With business hours, only the time inside the workspace's " a href=(super::business_hours::PATH) { "business hours" } " counts." }
        @if refused.is_some() { div.error-summary role="alert" { "Nothing was changed: see the form below." } }
        @if policies.is_empty() { p #no-policies { "No SLA policies yet." } }
        @for p in policies {
            @let mine = refused.filter(|r| r.policy_id == Some(p.id));
            @let entered = mine.map_or_else(|| Entered::of(p), |r| r.entered.clone());
            @let delete_id = format!("delete-policy-{}", p.id);
            section.card data-policy-id=(p.id) {
                h2 { (p.name) " " small.muted { "#" (p.id) } }
                p.policy-now {
                    (targets_summary(p))
                    @if p.business_hours { "; business hours only" }
                    "; created " (time(p.created_at))
                }
                details open[mine.is_some()] {
                    summary { "Edit" }
                    (policy_form(s, Some(p.id), &entered, channels, mine))
                }
                div.actions { (confirm_link(&delete_id, "Delete policy", "button small danger-outline")) }
                (confirm_dialog(&delete_id, confirm == Some(delete_id.as_str()), &format!("Delete the SLA policy {}?", p.name),
                    html! { "Conversations it already applies to keep their targets." },
                    &format!("{PATH}/{}/delete", p.id), "Delete policy", s))
            }
        }
        section.card #new-policy {
            h2 { "New policy" }
            (policy_form(s, None, &new_entered, channels, new_refused))
        }
    };
    HttpResponse::build(status)
        .insert_header(CacheControl(vec![CacheDirective::NoStore]))
        .content_type("text/html; charset=utf-8")
        .body(page("SLA policies", PATH, s, body).into_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_read_and_write_in_their_largest_unit() {
        assert_eq!(
            ["", "90", "90s", "30m", "4h", "2d", " 15 m "].map(parse_target),
            [Ok(None), Ok(Some(90)), Ok(Some(90)), Ok(Some(1800)), Ok(Some(14_400)), Ok(Some(172_800)), Ok(Some(900))]
        );
        assert!(parse_target("soon").is_err() && parse_target("4 weeks").is_err() && parse_target("h").is_err());
        assert_eq!(parse_target("-5m"), Ok(Some(-300)), "the domain refuses it, naming the field");
        assert_eq!(
            [Some(90), Some(1800), Some(14_400), Some(172_800), None].map(target_text),
            ["90s", "30m", "4h", "2d", ""]
        );
    }
}

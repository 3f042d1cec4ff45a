//! `/settings/workspace/teams`: the workspace's teams with their members and how each hands out
//! new conversations; admins set a team's assignment policy (mode and capacity) here. The route
//! entries decide who may see and change (`teams.read`, `teams.write`); the teams service
//! validates the policy and audits the change (`team.updated` with the policy).

use actix_web::http::header::{CacheControl, CacheDirective};
use actix_web::http::StatusCode;
use actix_web::{web, HttpResponse};
use domain::access::Action;
use domain::common::page::PageRequest;
use domain::teams::{AssignmentMode, Team, TeamChangeInput, UpdateTeamError, MAX_CAPACITY};
use maud::{html, Markup};

use super::layout::{csrf, field_error, invalid, page};
use super::session::{see_other_with_flash, SessionForm, Signed};
use super::PageError;
use crate::state::AppState;

/// The page's path.
pub const PATH: &str = "/settings/workspace/teams";

/// A refused policy: the team, what was entered, and why (by field).
#[derive(Debug, Default)]
struct Refused {
    team_id: i64,
    mode: String,
    capacity: String,
    mode_error: Option<String>,
    capacity_error: Option<String>,
}

async fn teams(s: &Signed, state: &AppState) -> Result<Vec<Team>, PageError> {
    let page = PageRequest::new(Some(100), None).map_err(|_| PageError::BadRequest("invalid page".into()))?;
    Ok(state.teams.list(s.caller.workspace_id, page).await?.data)
}

/// `GET`: the teams and, for admins, a policy form per team.
///
/// # Errors
/// Infrastructure failures.
pub async fn show(s: Signed, state: web::Data<AppState>) -> Result<HttpResponse, PageError> {
    let teams = teams(&s, &state).await?;
    Ok(render(&s, &teams, None, StatusCode::OK))
}

/// `POST /{team_id}`: sets the team's assignment policy (`mode`, `capacity`: blank for no limit).
///
/// # Errors
/// [`PageError::NotFound`] for a team outside the workspace; infrastructure failures.
pub async fn change(
    s: Signed,
    meta: crate::audit_context::RequestMeta,
    state: web::Data<AppState>,
    path: web::Path<(i64,)>,
    SessionForm(form): SessionForm,
) -> Result<HttpResponse, PageError> {
    let team_id = path.0;
    let mode = form.text("mode");
    let capacity = form.text("capacity");
    let mut refused = Refused { team_id, mode: mode.clone(), capacity: capacity.clone(), ..Refused::default() };
    let parsed = if capacity.is_empty() { Ok(None) } else { capacity.parse::<i64>().map(Some) };
    let Ok(parsed) = parsed else {
        refused.capacity_error = Some(format!("Enter a whole number from 1 to {MAX_CAPACITY}, or leave it empty."));
        let teams = teams(&s, &state).await?;
        return Ok(render(&s, &teams, Some(&refused), StatusCode::UNPROCESSABLE_ENTITY));
    };
    let input = TeamChangeInput { assignment: Some((mode, parsed)), ..TeamChangeInput::default() };
    match state.teams.update(s.caller.workspace_id, &s.audit(&meta), team_id, input).await {
        Ok(team) => {
            let limit = team.assignment.capacity.map_or("no limit".to_owned(), |c| format!("capacity {c}"));
            let message = format!("{}: {}, {limit}.", team.name, mode_label(team.assignment.mode));
            Ok(see_other_with_flash(&state.pages, PATH, &message))
        }
        Err(UpdateTeamError::Invalid(errors)) => {
            for f in errors.0 {
                let message = Some(format!("{}.", capitalized(&f.message)));
                if f.field == "assignment.mode" {
                    refused.mode_error = message;
                } else {
                    refused.capacity_error = message;
                }
            }
            let teams = teams(&s, &state).await?;
            Ok(render(&s, &teams, Some(&refused), StatusCode::UNPROCESSABLE_ENTITY))
        }
        Err(UpdateTeamError::NotFound(_)) => Err(PageError::NotFound("This team does not exist (any more).".into())),
        Err(e @ (UpdateTeamError::Duplicate(_) | UpdateTeamError::UnknownMembers(_))) => {
            Err(PageError::BadRequest(e.to_string()))
        }
        Err(UpdateTeamError::Unknown(e)) => Err(e.into()),
    }
}

fn capitalized(s: &str) -> String {
    let mut c = s.chars();
    c.next().map_or_else(String::new, |f| f.to_uppercase().chain(c).collect())
}

fn mode_label(mode: AssignmentMode) -> &'static str {
    match mode {
        AssignmentMode::Manual => "manual",
        AssignmentMode::RoundRobin => "round robin",
        AssignmentMode::Balanced => "balanced",
    }
}

fn policy_form(s: &Signed, t: &Team, refused: Option<&Refused>) -> Markup {
    let mine = refused.filter(|r| r.team_id == t.id);
    let mode = mine.map_or(t.assignment.mode.as_str(), |r| r.mode.as_str());
    let capacity =
        mine.map_or_else(|| t.assignment.capacity.map(|c| c.to_string()).unwrap_or_default(), |r| r.capacity.clone());
    let mode_error = mine.and_then(|r| r.mode_error.as_deref());
    let capacity_error = mine.and_then(|r| r.capacity_error.as_deref());
    let (mode_id, capacity_id) = (format!("team-{}-mode", t.id), format!("team-{}-capacity", t.id));
    html! {
        form.policy method="post" action={ (PATH) "/" (t.id) } novalidate {
            (csrf(s))
            div.row {
                div.field {
                    label for=(mode_id) { "Assignment" }
                    select id=(mode_id) name="mode" aria-invalid=[invalid(mode_error)] {
                        @for m in [AssignmentMode::Manual, AssignmentMode::RoundRobin, AssignmentMode::Balanced] {
                            option value=(m.as_str()) selected[mode == m.as_str()] { (mode_label(m)) }
                        }
                    }
                    (field_error(&mode_id, mode_error))
                }
                div.field {
                    label for=(capacity_id) { "Capacity " span.muted { "(open + pending per member; empty: no limit)" } }
                    input id=(capacity_id) type="number" name="capacity" min="1" max=(MAX_CAPACITY) value=(capacity)
                        aria-invalid=[invalid(capacity_error)]
                        aria-describedby=[capacity_error.map(|_| format!("{capacity_id}-error"))];
                    (field_error(&capacity_id, capacity_error))
                }
            }
            button.small type="submit" { "Save" }
        }
    }
}

fn render(s: &Signed, teams: &[Team], refused: Option<&Refused>, status: StatusCode) -> HttpResponse {
    let manage = s.may(Action::TeamsWrite);
    let body = html! {
        h1 { "Teams" }
        p.lead { "A channel's default team receives its new conversations. " strong { "Manual" } ": they wait with the team until someone takes them. " strong { "Round robin" } ": the team's online members in turn. " strong { "Balanced" } ": the online member with the fewest open and pending conversations. Automatic assignment never gives a member more than the capacity; the rest wait, oldest first, for the first member who has room." }
        @if refused.is_some() { div.error-summary role="alert" { "The policy was not changed: see below." } }
        @if teams.is_empty() {
            p { "No teams yet. Create them with " code { "POST /v1/teams" } "." }
        }
        @for t in teams {
            section.card data-team-id=(t.id) {
                h2 { (t.name) " " small { (t.member_ids.len()) " members" } }
                p.policy-now {
                    (mode_label(t.assignment.mode)) ", "
                    (t.assignment.capacity.map_or("no capacity limit".to_owned(), |c| format!("capacity {c}")))
                }
                @if manage { (policy_form(s, t, refused)) }
            }
        }
    };
    HttpResponse::build(status)
        .insert_header(CacheControl(vec![CacheDirective::NoStore]))
        .content_type("text/html; charset=utf-8")
        .body(page("Teams", PATH, s, body).into_string())
}

//! `/settings/workspace/members`: the workspace's members with their status; admins invite people
//! (wms e-mails them the link: the page never shows it), re-send an invitation, change roles and
//! deactivate or reactivate members. The route
//! entries decide who may see and act ([`crate::access`]); the members service keeps the rules of
//! the data (nobody changes their own role; the last admin stays).

use actix_web::http::header::{CacheControl, CacheDirective};
use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use domain::access::Action;
use domain::common::page::PageRequest;
use domain::members::{AddMember, AddMemberFailure, MemberChange, MemberProfile, MemberStatus, UpdateMemberError};
use domain::users::{Role, UserId};
use maud::{html, Markup};

use super::layout::{csrf, field_error, invalid, page, time};
use super::session::{see_other_with_flash, SessionForm, Signed};
use super::PageError;
use crate::state::AppState;

/// The page's path.
pub const PATH: &str = "/settings/workspace/members";

#[derive(Debug, Default)]
struct MembersView {
    members: Vec<MemberProfile>,
    next_cursor: Option<String>,
    email: String,
    name: String,
    role: String,
    email_error: Option<String>,
    name_error: Option<String>,
    role_error: Option<String>,
    error: Option<String>,
    /// Who was just invited.
    invited: Option<String>,
}

/// `?cursor=`
#[derive(Debug, serde::Deserialize)]
pub struct MembersQuery {
    cursor: Option<String>,
}

async fn load(s: &Signed, state: &AppState, cursor: Option<&str>, v: &mut MembersView) -> Result<(), PageError> {
    let page = PageRequest::new(Some(100), cursor).or_else(|_| PageRequest::new(Some(100), None));
    let page = page.map_err(|_| PageError::BadRequest("invalid page".into()))?;
    let listed = state.members.list(&s.caller, page).await?;
    v.members = listed.data;
    v.next_cursor = listed.next_cursor;
    Ok(())
}

/// `GET`: the list (and, for admins, the forms).
///
/// # Errors
/// Infrastructure failures.
pub async fn show(
    s: Signed,
    state: web::Data<AppState>,
    q: web::Query<MembersQuery>,
) -> Result<HttpResponse, PageError> {
    let mut v = MembersView { role: "agent".into(), ..MembersView::default() };
    load(&s, &state, q.cursor.as_deref(), &mut v).await?;
    Ok(render(&s, &v, StatusCode::OK))
}

/// `POST`: adds a person; a new account's invitation link is shown once.
///
/// # Errors
/// Infrastructure failures.
pub async fn add(
    req: HttpRequest,
    s: Signed,
    state: web::Data<AppState>,
    SessionForm(form): SessionForm,
) -> Result<HttpResponse, PageError> {
    let mut v = MembersView {
        email: form.text("email"),
        name: form.text("name"),
        role: form.text("role"),
        ..MembersView::default()
    };
    let cmd = AddMember {
        email: v.email.clone(),
        name: (!v.name.is_empty()).then(|| v.name.clone()),
        role: v.role.clone(),
        password: None,
    };
    let status = match state.members.add(&s.caller, &s.audit(&crate::audit_context::RequestMeta::of(&req)), cmd).await {
        Ok(added) => {
            // The link went to the address, never to this page.
            v.invited = Some(added.profile.email.clone());
            v.email.clear();
            v.name.clear();
            v.role = "agent".into();
            StatusCode::CREATED
        }
        Err(AddMemberFailure::Invalid(errors)) => {
            for f in errors.0 {
                let message = Some(format!("{}.", f.message));
                match f.field.as_str() {
                    "email" => v.email_error = message,
                    "role" => v.role_error = message,
                    _ => v.name_error = message,
                }
            }
            StatusCode::UNPROCESSABLE_ENTITY
        }
        Err(e @ AddMemberFailure::AlreadyMember(_)) => {
            v.email_error = Some(format!("{e}."));
            StatusCode::CONFLICT
        }
        Err(AddMemberFailure::Forbidden(why)) => return Err(PageError::Forbidden(why.to_owned())),
        Err(AddMemberFailure::Unknown(e)) => return Err(e.into()),
    };
    load(&s, &state, None, &mut v).await?;
    Ok(render(&s, &v, status))
}

/// `POST /{user_id}`: changes a member's role, or deactivates or reactivates them.
///
/// # Errors
/// [`PageError::NotFound`] for someone outside the workspace; [`PageError::Forbidden`] for the
/// rules of the data.
pub async fn change(
    s: Signed,
    meta: crate::audit_context::RequestMeta,
    state: web::Data<AppState>,
    path: web::Path<(i64,)>,
    SessionForm(form): SessionForm,
) -> Result<HttpResponse, PageError> {
    let active = match form.get("active") {
        Some("true") => Some(true),
        Some("false") => Some(false),
        _ => None,
    };
    let role = form.get("role").filter(|r| !r.is_empty());
    let change = MemberChange::new(None, role, active).map_err(|e| PageError::BadRequest(e.to_string()))?;
    if change.is_empty() {
        return Err(PageError::BadRequest("choose a role, or deactivate or reactivate the member".into()));
    }
    let done = state.members.update(&s.caller, &s.audit(&meta), UserId(path.0), &change).await;
    let message = match done {
        Ok(p) if active == Some(false) => format!("{} was deactivated.", p.email),
        Ok(p) if active == Some(true) => format!("{} was reactivated.", p.email),
        Ok(p) => format!("{} is now {}.", p.email, p.role.as_str()),
        Err(UpdateMemberError::Forbidden(why)) => return Err(PageError::Forbidden(why.to_owned())),
        Err(UpdateMemberError::NotFound(_)) => {
            return Err(PageError::NotFound("This member does not exist (any more).".into()))
        }
        Err(e @ UpdateMemberError::LastAdmin) => format!("Not changed: {e}."),
        Err(UpdateMemberError::Unknown(e)) => return Err(e.into()),
    };
    Ok(see_other_with_flash(&state.pages, PATH, &message))
}

fn add_form(s: &Signed, v: &MembersView) -> Markup {
    html! {
        form.card method="post" action=(PATH) novalidate {
            h2 { "Add a member" }
            (csrf(s))
            div.row {
                div.field {
                    label for="member-email" { "E-mail" }
                    input #member-email type="email" name="email" value=(v.email) required
                        aria-invalid=[invalid(v.email_error.as_deref())]
                        aria-describedby=[v.email_error.as_ref().map(|_| "member-email-error")];
                    (field_error("member-email", v.email_error.as_deref()))
                }
                div.field {
                    label for="member-name" { "Name " span.muted { "(optional)" } }
                    input #member-name type="text" name="name" value=(v.name) maxlength="100"
                        aria-invalid=[invalid(v.name_error.as_deref())]
                        aria-describedby=[v.name_error.as_ref().map(|_| "member-name-error")];
                    (field_error("member-name", v.name_error.as_deref()))
                }
                div.field {
                    label for="member-role" { "Role" }
                    select #member-role name="role" aria-invalid=[invalid(v.role_error.as_deref())] {
                        option value="agent" selected[v.role != "admin"] { "Agent: handles conversations" }
                        option value="admin" selected[v.role == "admin"] { "Admin: also manages keys, webhooks and members" }
                    }
                    (field_error("member-role", v.role_error.as_deref()))
                }
            }
            p.hint { "wms e-mails them a link (valid 7 days) to accept: someone new to wms chooses a password, someone with a wms account signs in. They are invited until they accept." }
            button type="submit" { "Send invitation" }
        }
    }
}

fn invited(email: &str) -> Markup {
    html! {
        section.card role="status" aria-labelledby="invited-title" {
            h2 #invited-title { "We sent an invitation to " (email) }
            p { "They join once they open the link in the e-mail (it works once, for 7 days). Until then they are listed as invited and have no access." }
        }
    }
}

fn rows(s: &Signed, v: &MembersView) -> Markup {
    let manage = s.may(Action::MembersManage);
    html! {
        div.table-wrap {
            table {
                caption.visually-hidden { "Members of this workspace" }
                thead { tr {
                    th scope="col" { "Name" } th scope="col" { "E-mail" } th scope="col" { "Role" }
                    th scope="col" { "Status" } th scope="col" { "Added" }
                    @if manage { th scope="col" { span.visually-hidden { "Actions" } } }
                } }
                tbody {
                    @for m in &v.members {
                        @let me = m.user_id == s.user_id;
                        tr data-user-id=(m.user_id.0) {
                            td { (m.name) @if me { " " span.muted { "(you)" } } }
                            td { (m.email) }
                            td { (m.role.as_str()) }
                            td { span class={ "badge " (match m.status { MemberStatus::Active => "active", MemberStatus::Invited => "pending", MemberStatus::Deactivated => "revoked" }) } { (m.status.as_str()) } }
                            td { (time(m.created_at)) }
                            @if manage {
                                td {
                                    @if !me {
                                        div.actions {
                                            @if m.status == MemberStatus::Invited {
                                                form method="post" action=(PATH) {
                                                    (csrf(s))
                                                    input type="hidden" name="email" value=(m.email);
                                                    input type="hidden" name="name" value=(m.name);
                                                    input type="hidden" name="role" value=(m.role.as_str());
                                                    button.small type="submit" { "Resend invitation" }
                                                }
                                            }
                                            form method="post" action={ (PATH) "/" (m.user_id.0) } {
                                                (csrf(s))
                                                @let other = if m.role == Role::Admin { "agent" } else { "admin" };
                                                input type="hidden" name="role" value=(other);
                                                button.small type="submit" { "Make " (other) }
                                            }
                                            form method="post" action={ (PATH) "/" (m.user_id.0) } {
                                                (csrf(s))
                                                @let on = m.status != MemberStatus::Deactivated;
                                                input type="hidden" name="active" value=(if on { "false" } else { "true" });
                                                button.small.danger-outline type="submit" { (if on { "Deactivate" } else { "Reactivate" }) }
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        @if let Some(c) = &v.next_cursor {
            p { a href={ (PATH) "?cursor=" (c) } { "More members →" } }
        }
    }
}

fn render(s: &Signed, v: &MembersView, status: StatusCode) -> HttpResponse {
    let body = html! {
        h1 { "Members" }
        p.lead { "The people who work in this workspace. Agents handle conversations; admins also manage API keys, webhooks and members." }
        @if let Some(e) = &v.error { div.error-summary role="alert" { (e) } }
        @if let Some(email) = &v.invited { (invited(email)) }
        @if s.may(Action::MembersManage) { (add_form(s, v)) }
        h2 { "Members" }
        (rows(s, v))
    };
    HttpResponse::build(status)
        .insert_header(CacheControl(vec![CacheDirective::NoStore]))
        .content_type("text/html; charset=utf-8")
        .body(page("Members", PATH, s, body).into_string())
}

//! The API Keys page's markup.

use actix_web::http::header::{CacheControl, CacheDirective};
use actix_web::http::StatusCode;
use actix_web::HttpResponse;
use domain::access::{Action, Scope};
use domain::api_keys::{ApiKey, ApiKeyState};
use maud::{html, Markup};
use time::OffsetDateTime;

use super::PATH;
use crate::pages::layout::{
    confirm_dialog, confirm_link, copy_button, csrf, field_error, invalid, page, plan_required, time, time_or,
};
use crate::pages::session::Signed;

/// What the page shows besides the list.
#[derive(Debug, Default)]
pub struct KeysView {
    /// The keys, newest first.
    pub keys: Vec<ApiKey>,
    /// The cursor of the next page, if any.
    pub next_cursor: Option<String>,
    /// A key just created: its name and the full value, shown this once.
    pub created: Option<(String, String)>,
    /// The name typed, when the form is shown again.
    pub name: String,
    /// The expiry date typed.
    pub expires: String,
    /// Error beside the name.
    pub name_error: Option<String>,
    /// Error beside the expiry.
    pub expires_error: Option<String>,
    /// The dialog to render open (`?confirm=`), for browsers without JavaScript.
    pub confirm: Option<String>,
    /// Restricted access chosen (else full access, the default).
    pub restricted: bool,
    /// The scopes ticked.
    pub scopes: Vec<String>,
    /// Error beside the scopes.
    pub scopes_error: Option<String>,
}

/// The scopes grouped by resource, in the policy's order.
fn scope_groups() -> Vec<(&'static str, Vec<Scope>)> {
    let mut groups: Vec<(&'static str, Vec<Scope>)> = Vec::new();
    for scope in Scope::ALL.iter().copied() {
        match groups.last_mut() {
            Some((resource, scopes)) if *resource == scope.resource() => scopes.push(scope),
            _ => groups.push((scope.resource(), vec![scope])),
        }
    }
    groups
}

fn scope_fields(v: &KeysView) -> Markup {
    html! {
        fieldset.field.scopes aria-describedby={ "key-scopes-hint" @if v.scopes_error.is_some() { " key-scopes-error" } } {
            legend { "Access" }
            label.choice { input type="radio" name="access" value="full" checked[!v.restricted]; " Full access (every scope)" }
            label.choice { input type="radio" name="access" value="restricted" checked[v.restricted]; " Restricted: only the scopes ticked below" }
            p.hint #key-scopes-hint {
                "Give a service only what it needs. A write scope includes reading the same resource. Scopes cannot be changed later: create a new key instead."
            }
            div.scope-groups {
                @for (resource, scopes) in scope_groups() {
                    div.scope-group role="group" aria-label=(resource) {
                        span.scope-resource { (resource) }
                        @for scope in scopes {
                            label.choice {
                                input type="checkbox" name="scope" value=(scope.as_str())
                                    checked[v.scopes.iter().any(|s| s == scope.as_str())];
                                " " (scope.as_str().split(':').nth(1).unwrap_or_default())
                            }
                        }
                    }
                }
            }
            (field_error("key-scopes", v.scopes_error.as_deref()))
        }
    }
}

fn scope_summary(key: &ApiKey) -> Markup {
    html! {
        @if key.scopes.is_full() {
            span.muted { "full access" }
        } @else {
            @for (i, s) in key.scopes.names().into_iter().enumerate() {
                @if i > 0 { ", " }
                code { (s) }
            }
        }
    }
}

fn state_badge(state: ApiKeyState) -> Markup {
    html! { span class={ "badge " (state.as_str()) } { (state.as_str()) } }
}

fn create_form(s: &Signed, v: &KeysView) -> Markup {
    html! {
        form.card method="post" action=(PATH) novalidate {
            h2 { "Create an API key" }
            (csrf(s))
            div.row {
                div.field {
                    label for="key-name" { "Name" }
                    input #key-name type="text" name="name" value=(v.name) maxlength="100" required
                        placeholder="crm-sync-production"
                        aria-invalid=[invalid(v.name_error.as_deref())]
                        aria-describedby={ "key-name-hint" @if v.name_error.is_some() { " key-name-error" } };
                    p.hint #key-name-hint { "Say which service will use it. 1 to 100 characters." }
                    (field_error("key-name", v.name_error.as_deref()))
                }
                div.field {
                    label for="key-expires" { "Expiry date " span.muted { "(optional)" } }
                    input #key-expires type="date" name="expires" value=(v.expires)
                        aria-invalid=[invalid(v.expires_error.as_deref())]
                        aria-describedby={ "key-expires-hint" @if v.expires_error.is_some() { " key-expires-error" } };
                    p.hint #key-expires-hint { "The key stops working at the end of this day (UTC). Blank: never expires." }
                    (field_error("key-expires", v.expires_error.as_deref()))
                }
            }
            (scope_fields(v))
            button type="submit" { "Create key" }
        }
    }
}

fn new_key(name: &str, key: &str) -> Markup {
    html! {
        section.card.new-key aria-labelledby="new-key-title" {
            h2 #new-key-title { "Your new key “" (name) "”" }
            p.warning role="alert" {
                strong { "Copy this key now. " }
                "It is shown only this once: wms keeps only a digest of it and cannot show it again. "
                "If you lose it, create a new key."
            }
            div.secret-box {
                label.visually-hidden for="new-key" { "New API key" }
                input #new-key type="text" readonly value=(key) size="60";
                (copy_button("new-key", "Copy key"))
            }
        }
    }
}

fn key_rows(s: &Signed, v: &KeysView, now: OffsetDateTime) -> Markup {
    html! {
        div.table-wrap {
            table {
                caption.visually-hidden { "API keys of this workspace" }
                thead { tr {
                    th scope="col" { "Name" } th scope="col" { "Key" } th scope="col" { "State" }
                    th scope="col" { "Created" } th scope="col" { "Expires" } th scope="col" { "Last used" } th scope="col" { "Scopes" }
                    th scope="col" { span.visually-hidden { "Actions" } }
                } }
                tbody {
                    @for k in &v.keys {
                        @let state = k.state(now);
                        @let revoke_id = format!("revoke-{}", k.id.0);
                        @let delete_id = format!("delete-{}", k.id.0);
                        @let roll_id = format!("roll-{}", k.id.0);
                        @let rollable = state == ApiKeyState::Active && k.rolled_to.is_none() && s.may(Action::ApiKeysCreate);
                        tr data-key-id=(k.id.0) {
                            td { (k.name) }
                            td.mono.masked { (k.masked_key) }
                            td {
                                (state_badge(state))
                                @if let Some(successor) = k.rolled_to {
                                    br;
                                    span.muted.rolled {
                                        "Rolled to key #" (successor.0)
                                        @if let Some(end) = k.revoked_at.filter(|r| *r > now) { "; works until " (time(end)) }
                                    }
                                }
                            }
                            td { (time(k.created_at)) }
                            td { (time_or(k.expires_at, "never")) }
                            td {
                                (time_or(k.last_used_at, "never"))
                                @if let Some(ip) = &k.last_used_ip { br; span.mono.muted.last-ip { "from " (ip) } }
                            }
                            td.scopes { (scope_summary(k)) }
                            td {
                                div.actions {
                                    @if rollable {
                                        (confirm_link(&roll_id, "Roll", "button small secondary"))
                                    }
                                    @if state == ApiKeyState::Active {
                                        (confirm_link(&revoke_id, "Revoke", "button small danger-outline"))
                                    }
                                    (confirm_link(&delete_id, "Delete", "button small danger-outline"))
                                }
                                @if rollable {
                                    (roll_dialog(k, &roll_id, v.confirm.as_deref() == Some(roll_id.as_str()), s))
                                }
                                @if state == ApiKeyState::Active {
                                    (confirm_dialog(&revoke_id, v.confirm.as_deref() == Some(revoke_id.as_str()),
                                        &format!("Revoke the key “{}”?", k.name),
                                        html! { "Requests with " code { (k.masked_key) } " stop working immediately. The key stays listed as revoked. This cannot be undone." },
                                        &format!("{PATH}/{}/revoke", k.id.0), "Revoke key", s))
                                }
                                (confirm_dialog(&delete_id, v.confirm.as_deref() == Some(delete_id.as_str()),
                                    &format!("Delete the key “{}”?", k.name),
                                    html! { "The key " code { (k.masked_key) } " and its record are removed for good; an active key stops working immediately." },
                                    &format!("{PATH}/{}/delete", k.id.0), "Delete key", s))
                            }
                        }
                    }
                    @if v.keys.is_empty() {
                        tr { td colspan="8" .muted { "No API keys yet." } }
                    }
                }
            }
        }
        @if let Some(c) = &v.next_cursor {
            p { a href={ (PATH) "?cursor=" (c) } { "Older keys →" } }
        }
    }
}

/// The grace periods the roll dialog offers (the API takes any 0..=604800 seconds).
const GRACE_CHOICES: [(i64, &str); 5] =
    [(0, "None: the old key stops now"), (3600, "1 hour"), (86_400, "1 day"), (259_200, "3 days"), (604_800, "7 days")];

/// The dialog that rolls a key, with the choice of how long the old key keeps working.
fn roll_dialog(k: &ApiKey, id: &str, open: bool, s: &Signed) -> Markup {
    html! {
        dialog.confirm id=(id) open[open] aria-labelledby={ (id) "-title" } {
            form method="post" action={ (PATH) "/" (k.id.0) "/roll" } {
                (csrf(s))
                h2 id={ (id) "-title" } { "Roll the key “" (k.name) "”?" }
                p {
                    "A new key with the same name, scopes and expiry is created and shown once. "
                    "The old key " code { (k.masked_key) } " keeps working for the grace period you choose, "
                    "so you can deploy the new one first; then it is revoked."
                }
                div.field {
                    label for={ (id) "-grace" } { "Grace period for the old key" }
                    select id={ (id) "-grace" } name="grace_seconds" {
                        @for (seconds, label) in GRACE_CHOICES {
                            option value=(seconds) selected[seconds == 86_400] { (label) }
                        }
                    }
                }
                div.actions {
                    a.button.secondary href="?" data-close-dialog=(id) { "Cancel" }
                    button type="submit" { "Roll key" }
                }
            }
        }
    }
}

/// The whole page.
pub fn render(s: &Signed, v: &KeysView, now: OffsetDateTime, status: StatusCode) -> HttpResponse {
    let body = html! {
        h1 { "API Keys" }
        p.lead {
            "Keys let your services call the "
            a href="/settings/workspace/rest-api" { "REST API" }
            " for this workspace: send one as " code { "Authorization: Bearer <key>" } ". "
            "Use one key per service, keep keys out of code and chat, and revoke a key when its service is retired."
        }
        @if let Some((name, key)) = &v.created {
            (new_key(name, key))
        }
        @if let Some(required) = s.plan_required_for(Action::ApiKeysCreate) {
            (plan_required("API keys", required, s.plan()))
        } @else {
            (create_form(s, v))
        }
        h2 { "Keys" }
        (key_rows(s, v, now))
    };
    HttpResponse::build(status)
        // The page may hold a full key: no cache may keep it.
        .insert_header(CacheControl(vec![CacheDirective::NoStore]))
        .content_type("text/html; charset=utf-8")
        .body(page("API Keys", PATH, s, body).into_string())
}

//! The webhooks pages' markup.

use actix_web::http::header::{CacheControl, CacheDirective};
use actix_web::http::StatusCode;
use actix_web::HttpResponse;
use domain::webhooks::{Delivery, EventType, WebhookDestination};
use maud::{html, Markup};

use super::{detail_path, ControlsForm, DestinationForm, FormErrors, PATH, WEBHOOK_PLAN};
use crate::pages::layout::{
    confirm_dialog, confirm_link, copy_button, csrf, field_error, invalid, page, plan_required, time, time_or,
};
use crate::pages::session::Signed;

/// The form of a new or edited destination.
pub fn destination_form(
    s: &Signed,
    action: &str,
    f: &DestinationForm,
    e: &FormErrors,
    submit: &str,
    with_active: bool,
) -> Markup {
    html! {
        form method="post" action=(action) novalidate {
            (csrf(s))
            div.row {
                div.field {
                    label for="wh-url" { "Endpoint URL" }
                    input #wh-url type="url" name="url" value=(f.url) required placeholder="https://hooks.example.com/wms"
                        aria-invalid=[invalid(e.url.as_deref())]
                        aria-describedby={ "wh-url-hint" @if e.url.is_some() { " wh-url-error" } };
                    p.hint #wh-url-hint { "An https:// URL on the public internet; wms sends a signed POST for each event." }
                    (field_error("wh-url", e.url.as_deref()))
                }
                div.field {
                    label for="wh-platform" { "Platform" }
                    input #wh-platform type="text" name="platform" value=(f.platform) placeholder="custom" maxlength="50"
                        list="wh-platforms"
                        aria-invalid=[invalid(e.platform.as_deref())]
                        aria-describedby={ "wh-platform-hint" @if e.platform.is_some() { " wh-platform-error" } };
                    datalist #wh-platforms { option value="custom" {} option value="zapier" {} option value="make" {} option value="n8n" {} }
                    p.hint #wh-platform-hint { "A label for what receives the events. Blank: custom." }
                    (field_error("wh-platform", e.platform.as_deref()))
                }
            }
            fieldset aria-describedby=[e.events.as_ref().map(|_| "wh-events-error")] {
                legend { "Events" }
                div.checks {
                    @for ev in EventType::CATALOG.iter().copied() {
                        label {
                            input type="checkbox" name="events" value=(ev.as_str()) checked[f.events.iter().any(|x| x == ev.as_str())];
                            code { (ev.as_str()) }
                        }
                    }
                }
                (field_error("wh-events", e.events.as_deref()))
            }
            @if with_active {
                div.field {
                    label.inline { input type="checkbox" name="active" value="true" checked[f.active]; "Active: send events to it right away" }
                }
            } @else {
                (controls_fields(&f.controls, e))
            }
            button type="submit" { (submit) }
        }
    }
}

/// One text input of the controls, with its hint and error.
fn control_input(id: &str, name: &str, label: &str, value: Option<&str>, hint: &str, error: Option<&str>) -> Markup {
    html! {
        div.field {
            label for=(id) { (label) }
            input id=(id) type="text" name=(name) value=(value.unwrap_or_default())
                aria-invalid=[invalid(error)]
                aria-describedby={ (id) "-hint" @if error.is_some() { " " (id) "-error" } };
            p.hint id={ (id) "-hint" } { (hint) }
            (field_error(id, error))
        }
    }
}

/// The delivery controls of the edit form (`docs/webhooks.md`, "Destination controls").
fn controls_fields(c: &ControlsForm, e: &FormErrors) -> Markup {
    let ordering = c.ordering.as_deref().unwrap_or("none");
    html! {
        fieldset #controls-form {
            legend { "Delivery controls" }
            div.row {
                (control_input("wh-rate", "rate_limit_per_second", "Rate limit (per second)", c.rate_limit_per_second.as_deref(),
                    "1 to 1000. Blank: wms adapts its pace to the endpoint.", e.rate_limit_per_second.as_deref()))
                (control_input("wh-in-flight", "max_in_flight", "At most in flight at once", c.max_in_flight.as_deref(),
                    "1 to 100. Blank: wms adapts its pace to the endpoint.", e.max_in_flight.as_deref()))
            }
            div.field {
                label for="wh-headers" { "Static headers" }
                textarea #wh-headers name="headers" rows="3" spellcheck="false" autocomplete="off"
                    aria-invalid=[invalid(e.headers.as_deref())]
                    aria-describedby={ "wh-headers-hint" @if e.headers.is_some() { " wh-headers-error" } } {
                    (c.headers.as_deref().unwrap_or_default())
                }
                p.hint #wh-headers-hint {
                    "Up to 10, one " code { "Name: value" } " per line, sent with every delivery (for example an API "
                    "gateway's key). Stored encrypted. " code { "webhook-*" } ", " code { "content-type" } ", "
                    code { "content-length" } " and " code { "host" } " are wms's own."
                }
                (field_error("wh-headers", e.headers.as_deref()))
            }
            div.row {
                (control_input("wh-filter-channels", "filter_channel_ids", "Only these channels", c.filter_channel_ids.as_deref(),
                    "Channel ids, separated by commas. Blank: every channel.", e.filter.as_deref()))
                (control_input("wh-filter-labels", "filter_labels", "Only threads with one of these labels", c.filter_labels.as_deref(),
                    "Label names, separated by commas; a label created later counts too. Blank: no label needed.", None))
            }
            div.field {
                label for="wh-ordering" { "Ordering" }
                select #wh-ordering name="ordering" aria-invalid=[invalid(e.ordering.as_deref())] {
                    option value="none" selected[ordering == "none"] { "None: as fast as the endpoint takes them" }
                    option value="per_thread" selected[ordering == "per_thread"] { "Per conversation: each thread's events in order" }
                }
                (field_error("wh-ordering", e.ordering.as_deref()))
            }
        }
    }
}

fn active_badge(d: &WebhookDestination) -> Markup {
    html! {
        @if d.active { span.badge.active { "active" } } @else { span.badge.inactive { "inactive" } }
    }
}

/// The list page.
pub fn list_page(
    s: &Signed,
    all: Option<&[WebhookDestination]>,
    f: &DestinationForm,
    e: &FormErrors,
    status: StatusCode,
) -> HttpResponse {
    let body = html! {
        h1 { "Webhooks" }
        p.lead {
            "Webhooks send your systems a signed HTTPS POST the moment something happens in this workspace. "
            "Each destination has its own signing secret and delivery log."
        }
        @match all {
            None => (plan_required("Webhooks", WEBHOOK_PLAN, s.plan())),
            Some(all) => {
                // A destination wms deactivated is not silent: its owner sees why deliveries stopped.
                @for d in all.iter().filter(|d| !d.active && d.disabled_reason.is_some()) {
                    div.warning.disabled-banner role="alert" data-disabled-destination=(d.id.0) {
                        p {
                            "wms deactivated " a href=(detail_path(d.id)) { span.mono { (d.url) } } ": "
                            (d.disabled_reason.as_deref().unwrap_or_default()) ". "
                            "Events since then were not sent to it; after re-enabling, replay them from its page."
                        }
                        form method="post" action={ (detail_path(d.id)) "/active" } {
                            (csrf(s))
                            input type="hidden" name="active" value="true";
                            button.small type="submit" { "Re-enable" span.visually-hidden { " " (d.url) } }
                        }
                    }
                }
                div.table-wrap {
                    table {
                        caption.visually-hidden { "Webhook destinations" }
                        thead { tr {
                            th scope="col" { "Endpoint" } th scope="col" { "Platform" } th scope="col" { "Events" }
                            th scope="col" { "State" } th scope="col" { "Created" } th scope="col" { span.visually-hidden { "Actions" } }
                        } }
                        tbody {
                            @for d in all {
                                tr data-destination-id=(d.id.0) {
                                    td { a href=(detail_path(d.id)) { (d.url) } }
                                    td { (d.platform) }
                                    td { (d.events.len()) " of " (EventType::CATALOG.len()) }
                                    td { (active_badge(d)) }
                                    td { (time(d.created_at)) }
                                    td { a.button.small.secondary href=(detail_path(d.id)) { "Manage" span.visually-hidden { " " (d.url) } } }
                                }
                            }
                            @if all.is_empty() {
                                tr { td colspan="6" .muted { "No destinations yet. Add one below." } }
                            }
                        }
                    }
                }
                section.card aria-labelledby="new-destination" {
                    h2 #new-destination { "Add a destination" }
                    (destination_form(s, PATH, f, e, "Add destination", true))
                }
            }
        }
    };
    html_response(status, page("Webhooks", PATH, s, body))
}

/// What the detail page shows.
#[derive(Debug, Default)]
pub struct DetailView {
    /// The edit form's values.
    pub form: DestinationForm,
    /// Its errors.
    pub errors: FormErrors,
    /// The signing secret, when revealed or just rotated.
    pub secret: Option<String>,
    /// Whether the secret was just rotated.
    pub rotated: bool,
    /// The delivery log, newest first.
    pub deliveries: Vec<Delivery>,
    /// The next page of the log.
    pub next_cursor: Option<String>,
    /// The dialog to render open (no-script fallback).
    pub confirm: Option<String>,
    /// The figures of the last 24 hours and the pace.
    pub stats: Option<domain::webhooks::stats::DestinationStats>,
    /// The replay form's From and Until as typed (after a refusal, the form keeps them).
    pub replay: (String, String),
}

fn delivery_rows(s: &Signed, d: &WebhookDestination, v: &DetailView) -> Markup {
    html! {
        div.table-wrap {
            table #deliveries {
                caption.visually-hidden { "Delivery log" }
                thead { tr {
                    th scope="col" { "Event" } th scope="col" { "Status" } th.num scope="col" { "Attempts" }
                    th scope="col" { "Last answer" } th scope="col" { "Created" } th scope="col" { "Next attempt" }
                    th scope="col" { span.visually-hidden { "Actions" } }
                } }
                tbody {
                    @for del in &v.deliveries {
                        @let last = del.attempts.last();
                        tr data-delivery-id=(del.id.0) {
                            td { code { (del.event_type) } br; span.muted.mono { (del.message_id) } }
                            td { span class={ "badge " (del.status.as_str()) } { (del.status.as_str()) } }
                            td.num { (del.attempt_count) }
                            td {
                                @match last {
                                    Some(a) => {
                                        @match (a.status_code, &a.error) {
                                            (Some(code), _) => { "HTTP " (code) }
                                            (None, Some(err)) => { span.error-text { (err) } }
                                            (None, None) => { "—" }
                                        }
                                        " " span.muted { "(" (a.duration_ms) " ms)" }
                                    }
                                    None => span.muted { "not sent yet" },
                                }
                            }
                            td { (time(del.created_at)) }
                            td { (time_or(del.next_attempt_at, "—")) }
                            td {
                                form method="post" action={ (detail_path(d.id)) "/deliveries/" (del.id.0) "/retry" } {
                                    (csrf(s))
                                    button.small.secondary type="submit" { "Retry" span.visually-hidden { " delivery " (del.id.0) } }
                                }
                            }
                        }
                    }
                    @if v.deliveries.is_empty() {
                        tr { td colspan="7" .muted { "No deliveries yet. Send a test event to check your endpoint." } }
                    }
                }
            }
        }
        @if let Some(c) = &v.next_cursor {
            p { a href={ (detail_path(d.id)) "?cursor=" (c) "#deliveries" } { "Older deliveries →" } }
        }
    }
}

/// One destination's page.
pub fn detail_page(s: &Signed, d: &WebhookDestination, v: &DetailView, status: StatusCode) -> HttpResponse {
    let path = detail_path(d.id);
    let delete_id = "delete-destination";
    let rotate_id = "rotate-secret";
    let body = html! {
        p { a href=(PATH) { "← All destinations" } }
        h1 { "Destination " span.mono { (d.url) } }
        p { (active_badge(d)) " " span.muted { "Created " (time(d.created_at)) ", last changed " (time(d.updated_at)) } }
        @if let Some(reason) = &d.disabled_reason {
            p.warning role="note" { "wms deactivated this destination: " (reason) ". Fix the endpoint, then activate it again." }
        }
        div.actions {
            form method="post" action={ (path) "/test" } {
                (csrf(s))
                label.visually-hidden for="test-event-type" { "Event type of the test" }
                select #test-event-type name="event_type" {
                    option value="webhook.test" { "webhook.test" }
                    @for ev in EventType::CATALOG.iter().copied() { option value=(ev.as_str()) { "sample " (ev.as_str()) } }
                }
                " "
                button type="submit" { "Send test event" }
            }
            form method="post" action={ (path) "/active" } {
                (csrf(s))
                @if d.active {
                    input type="hidden" name="active" value="false";
                    button.secondary type="submit" { "Deactivate" }
                } @else {
                    input type="hidden" name="active" value="true";
                    button.secondary type="submit" { "Activate" }
                }
            }
            (confirm_link(delete_id, "Delete destination", "button danger-outline"))
        }
        (confirm_dialog(delete_id, v.confirm.as_deref() == Some(delete_id),
            "Delete this webhook destination?",
            html! { "Deliveries to " strong.mono { (d.url) } " stop and its delivery log is deleted. This cannot be undone." },
            &format!("{path}/delete"), "Delete destination", s))

        section.card aria-labelledby="secret-title" {
            h2 #secret-title { "Signing secret" }
            p { "Your endpoint uses the secret to verify the " code { "webhook-signature" } " header of every delivery." }
            @if let Some(secret) = &v.secret {
                @if v.rotated {
                    p.warning role="alert" { "The secret was rotated. The previous secret keeps signing deliveries for 24 hours, so update your endpoint now." }
                }
                div.secret-box {
                    label.visually-hidden for="signing-secret" { "Signing secret" }
                    input #signing-secret type="text" readonly value=(secret) size="50";
                    (copy_button("signing-secret", "Copy secret"))
                }
            } @else {
                form method="post" action={ (path) "/secret" } {
                    (csrf(s))
                    button.secondary type="submit" { "Reveal secret" }
                }
            }
            p { (confirm_link(rotate_id, "Rotate secret", "button small danger-outline")) }
            (confirm_dialog(rotate_id, v.confirm.as_deref() == Some(rotate_id),
                "Rotate the signing secret?",
                html! { "A new secret signs deliveries to " strong.mono { (d.url) } " from now on; the old one also signs them for 24 hours." },
                &format!("{path}/secret/rotate"), "Rotate secret", s))
        }

        (super::health::health_section(d, v.stats.as_ref()))

        section.card aria-labelledby="edit-title" {
            h2 #edit-title { "Edit" }
            (destination_form(s, &path, &v.form, &v.errors, "Save changes", false))
        }

        section.card aria-labelledby="replay-title" {
            h2 #replay-title { "Replay events" }
            p {
                "Sends again every event of the period, of a type this destination subscribes to, that it has not "
                "received successfully — also those from while it was inactive — oldest first, with the same "
                code { "webhook-id" } " (so your endpoint can drop duplicates). Times are UTC."
            }
            form method="post" action={ (path) "/replay" } {
                (csrf(s))
                div.row {
                    div.field {
                        label for="replay-since" { "From" }
                        input #replay-since type="datetime-local" name="since" value=(v.replay.0) required;
                    }
                    div.field {
                        label for="replay-until" { "Until (blank: now)" }
                        input #replay-until type="datetime-local" name="until" value=(v.replay.1);
                    }
                }
                button.secondary type="submit" { "Replay events" }
            }
        }

        h2 { "Delivery log" }
        (delivery_rows(s, d, v))
    };
    html_response(status, page("Webhook destination", PATH, s, body))
}

fn html_response(status: StatusCode, markup: Markup) -> HttpResponse {
    HttpResponse::build(status)
        // Secrets may be on the page.
        .insert_header(CacheControl(vec![CacheDirective::NoStore]))
        .content_type("text/html; charset=utf-8")
        .body(markup.into_string())
}

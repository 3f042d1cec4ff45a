//! The page shell and the pieces every page uses.

use maud::{html, Markup, DOCTYPE};
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

use super::session::{Signed, CSRF_FIELD};
use domain::access::Action;
use domain::workspace::PlanTier;

/// The navigation: (path, label, what the policy must allow for the link to show).
const NAV: &[(&str, &str, Action)] = &[
    ("/settings/workspace/api-keys", "API Keys", Action::ApiKeysRead),
    ("/settings/integrations/webhooks", "Webhooks", Action::WebhooksRead),
    ("/settings/workspace/members", "Members", Action::MembersRead),
    ("/settings/workspace/teams", "Teams", Action::TeamsRead),
    ("/settings/workspace/audit-log", "Audit log", Action::AuditRead),
    ("/settings/workspace/channels", "Channels", Action::ChannelsRead),
    ("/settings/workspace/business-hours", "Business hours", Action::BusinessHoursRead),
    ("/settings/workspace/sla-policies", "SLA policies", Action::SlaPoliciesManage),
    ("/settings/workspace/reports", "Reports", Action::ReportsRead),
    ("/settings/workspace/rest-api", "REST API", Action::RestReferenceRead),
    ("/analytics", "Analytics", Action::AnalyticsRead),
    ("/settings/account/connected-apps", "Connected apps", Action::ConnectedApps),
];

fn head(title: &str) -> Markup {
    html! {
        head {
            meta charset="utf-8";
            meta name="viewport" content="width=device-width, initial-scale=1";
            title { (title) " · wms" }
            link rel="stylesheet" href=(super::assets::CSS_PATH);
            link rel="icon" href=(super::assets::ICON_PATH) type="image/svg+xml";
            script src=(super::assets::JS_PATH) defer {}
        }
    }
}

/// The shell of a page with the top header: the brand (then `brand`), the rest of the header
/// (`header`), and `main`.
fn with_header(title: &str, brand: Markup, header: Markup, main: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            (head(title))
            body {
                a.skip href="#main" { "Skip to content" }
                header.top {
                    div.brand {
                        span.logo aria-hidden="true" { "◆" }
                        span { "wms" }
                        (brand)
                    }
                    (header)
                }
                main #main tabindex="-1" { (main) }
            }
        }
    }
}

/// A page of a signed-in member: header with the workspace and the navigation, the flash
/// message, then `body`. `current` is the active navigation path.
pub fn page(title: &str, current: &str, s: &Signed, body: Markup) -> Markup {
    let brand = html! {
        span.workspace title="Workspace" { (s.workspace_name) }
        span.plan { (s.plan().as_str()) }
    };
    let header = html! {
        nav aria-label="Settings" {
            ul {
                // A link below the plan still shows: its page explains the plan.
                @for (path, label, _) in NAV.iter().copied().filter(|n| s.may_see(n.2)) {
                    li {
                        @if path == current {
                            a href=(path) aria-current="page" { (label) }
                        } @else {
                            a href=(path) { (label) }
                        }
                    }
                }
            }
        }
        form.signout method="post" action="/logout" {
            (csrf(s))
            span.user { (s.user_email) }
            button.link type="submit" { "Sign out" }
        }
    };
    let main = html! {
        @if let Some(msg) = &s.flash {
            div.flash role="status" { (msg) }
        }
        (body)
    };
    with_header(title, brand, header, main)
}

/// A public page (the documentation): the header without workspace or account, then `body`.
pub fn public(title: &str, body: Markup) -> Markup {
    let header = html! {
        nav aria-label="Documentation" {
            ul {
                li { a href="/docs" aria-current="page" { "Documentation" } }
                li { a href="/" { "Settings" } }
            }
        }
    };
    with_header(title, html! {}, header, body)
}

/// A page without the signed-in header (sign-in, errors).
pub fn bare(title: &str, body: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            (head(title))
            body.bare {
                main #main.narrow {
                    div.brand.center { span.logo aria-hidden="true" { "◆" } span { "wms" } }
                    (body)
                }
            }
        }
    }
}

/// The hidden anti-forgery field of a form.
pub fn csrf(s: &Signed) -> Markup {
    html! { input type="hidden" name=(CSRF_FIELD) value=(s.csrf); }
}

/// A box that says which plan a feature needs, instead of a form that would fail.
pub fn plan_required(feature: &str, required: PlanTier, current: PlanTier) -> Markup {
    html! {
        div.notice.plan-required role="note" {
            h2 { (feature) " needs the " strong { (required.as_str()) } " plan" }
            p {
                "This workspace is on the " strong { (current.as_str()) } " plan. "
                "Ask the owner of your wms subscription to move the workspace to "
                strong { (required.as_str()) } " or higher to use " (feature.to_lowercase()) "."
            }
        }
    }
}

/// A confirmation dialog for a destructive action. Without JavaScript the page renders it open
/// when `open` (the `?confirm=` link target); with JavaScript the trigger link opens it in place.
pub fn confirm_dialog(
    id: &str,
    open: bool,
    heading: &str,
    text: Markup,
    action: &str,
    button: &str,
    s: &Signed,
) -> Markup {
    html! {
        dialog.confirm id=(id) open[open] aria-labelledby={ (id) "-title" } {
            form method="post" action=(action) {
                (csrf(s))
                h2 id={ (id) "-title" } { (heading) }
                p { (text) }
                div.actions {
                    a.button.secondary href="?" data-close-dialog=(id) { "Cancel" }
                    button.danger type="submit" { (button) }
                }
            }
        }
    }
}

/// The link that opens a confirmation dialog.
pub fn confirm_link(id: &str, label: &str, class: &str) -> Markup {
    html! { a class=(class) href={ "?confirm=" (id) } data-dialog=(id) role="button" { (label) } }
}

/// A time for people: `2026-11-20 14:03 UTC`, in a `<time>` element with the exact instant.
pub fn time(t: OffsetDateTime) -> Markup {
    let utc = t.to_offset(time::UtcOffset::UTC);
    let exact = utc.format(&Rfc3339).unwrap_or_default();
    let shown = format!(
        "{:04}-{:02}-{:02} {:02}:{:02} UTC",
        utc.year(),
        u8::from(utc.month()),
        utc.day(),
        utc.hour(),
        utc.minute()
    );
    html! { time datetime=(exact) { (shown) } }
}

/// An optional time, or `text` when absent.
pub fn time_or(t: Option<OffsetDateTime>, text: &str) -> Markup {
    match t {
        Some(t) => time(t),
        None => html! { span.muted { (text) } },
    }
}

/// An error message beside a field, referenced by the field's `aria-describedby`.
pub fn field_error(id: &str, message: Option<&str>) -> Markup {
    html! {
        @if let Some(m) = message {
            p.field-error id={ (id) "-error" } { (m) }
        }
    }
}

/// `aria-describedby` / `aria-invalid` attributes are rendered by callers; this says whether
/// there is an error for the attribute values.
pub fn invalid(message: Option<&str>) -> Option<&'static str> {
    message.map(|_| "true")
}

/// A copy button for the text of element `target` (progressive: hidden without JavaScript).
pub fn copy_button(target: &str, label: &str) -> Markup {
    html! { button.secondary.copy type="button" data-copy=(target) hidden { (label) } }
}

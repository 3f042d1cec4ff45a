//! `/settings/workspace/business-hours`: the workspace's business hours (time zone, open
//! intervals per weekday, holidays), which the reports and SLA policies with `business_hours` use.
//! Members read them; admins change them with the form, validated and audited
//! (`business_hours.updated`) by the same service as `PUT /v1/business-hours`. The route entries
//! decide who may see and change (`business_hours.read`, `business_hours.write`).

use std::collections::BTreeMap;

use actix_web::http::header::{CacheControl, CacheDirective};
use actix_web::http::StatusCode;
use actix_web::{web, HttpResponse};
use domain::access::Action;
use domain::business_hours::{BusinessHoursRecord, SetBusinessHoursError, WEEKDAYS};
use domain::common::error::ValidationErrors;
use maud::{html, Markup};

use super::layout::{csrf, field_error, invalid, page};
use super::session::{see_other_with_flash, SessionForm, Signed};
use super::PageError;
use crate::state::AppState;

/// The page's path.
pub const PATH: &str = "/settings/workspace/business-hours";

const DAY_NAMES: [&str; 7] = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"];

/// What the form holds: the time zone, each weekday's intervals as text, the holidays as text.
#[derive(Debug, Default)]
struct Entered {
    timezone: String,
    days: BTreeMap<String, String>,
    holidays: String,
}

impl Entered {
    fn of(r: &BusinessHoursRecord) -> Self {
        let days = WEEKDAYS
            .iter()
            .map(|d| {
                let text = r.days.get(*d).map_or_else(String::new, |intervals| {
                    intervals.iter().map(|i| i.join("-")).collect::<Vec<_>>().join(", ")
                });
                ((*d).to_owned(), text)
            })
            .collect();
        Self { timezone: r.timezone.clone(), days, holidays: r.holidays.join("\n") }
    }

    /// The record the form describes: `09:00-17:00, 18:00-20:00` per day, holidays one per line
    /// or separated by commas. Whatever is malformed is passed on as typed, for the domain to name.
    fn record(&self) -> BusinessHoursRecord {
        let days = self
            .days
            .iter()
            .filter(|(_, text)| !text.trim().is_empty())
            .map(|(day, text)| {
                let intervals = text
                    .split(',')
                    .map(str::trim)
                    .filter(|i| !i.is_empty())
                    .map(|i| i.split(['-', '–']).map(|t| t.trim().to_owned()).collect())
                    .collect();
                (day.clone(), intervals)
            })
            .collect();
        let holidays = self
            .holidays
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|h| !h.is_empty())
            .map(str::to_owned)
            .collect();
        BusinessHoursRecord { timezone: self.timezone.clone(), days, holidays }
    }
}

/// `GET`: the hours, with the form for admins.
///
/// # Errors
/// Infrastructure failures.
pub async fn show(s: Signed, state: web::Data<AppState>) -> Result<HttpResponse, PageError> {
    let record = state.business_hours.get(s.caller.workspace_id).await?;
    Ok(render(&s, &Entered::of(&record), None, StatusCode::OK))
}

/// `POST`: replaces the hours (`timezone`, `days.mon` … `days.sun`, `holidays`).
///
/// # Errors
/// Infrastructure failures.
pub async fn save(
    s: Signed,
    meta: crate::audit_context::RequestMeta,
    state: web::Data<AppState>,
    SessionForm(form): SessionForm,
) -> Result<HttpResponse, PageError> {
    let entered = Entered {
        timezone: form.text("timezone"),
        days: WEEKDAYS.iter().map(|d| ((*d).to_owned(), form.text(&format!("days.{d}")))).collect(),
        holidays: form.text("holidays"),
    };
    match state.business_hours.set(s.caller.workspace_id, &s.audit(&meta), entered.record()).await {
        Ok(r) => Ok(see_other_with_flash(&state.pages, PATH, &format!("Business hours saved ({}).", r.timezone))),
        Err(SetBusinessHoursError::Invalid(errors)) => {
            Ok(render(&s, &entered, Some(&errors), StatusCode::UNPROCESSABLE_ENTITY))
        }
        Err(SetBusinessHoursError::Unknown(e)) => Err(e.into()),
    }
}

fn errors_of(errors: Option<&ValidationErrors>, field: &str) -> Option<String> {
    let messages: Vec<&str> = errors
        .map(|e| e.0.iter().filter(|f| f.field == field).map(|f| f.message.as_str()).collect())
        .unwrap_or_default();
    (!messages.is_empty()).then(|| messages.join("; "))
}

fn summary(e: &Entered) -> Markup {
    let open = e.days.values().any(|t| !t.trim().is_empty());
    html! {
        @if open {
            dl.kv #hours-now {
                dt { "Time zone" } dd { (e.timezone) }
                @for (day, name) in WEEKDAYS.iter().zip(DAY_NAMES) {
                    dt { (name) }
                    dd { @match e.days.get(*day).filter(|t| !t.is_empty()) { Some(t) => { (t) } None => { span.muted { "closed" } } } }
                }
                dt { "Holidays" } dd { @if e.holidays.is_empty() { span.muted { "none" } } @else { (e.holidays.replace('\n', ", ")) } }
            }
        } @else {
            p #hours-now { "No business hours are set: every hour counts." }
        }
    }
}

fn render(s: &Signed, e: &Entered, errors: Option<&ValidationErrors>, status: StatusCode) -> HttpResponse {
    let manage = s.may(Action::BusinessHoursWrite);
    let (tz_error, days_error, holidays_error) =
        (errors_of(errors, "timezone"), errors_of(errors, "days"), errors_of(errors, "holidays"));
    let body = html! {
        h1 { "Business hours" }
        p.lead { "When your team works. Reports counted with business hours, and SLA policies that use them, count only the time inside these hours; "
            "a holiday has none. Without any hours set, every hour counts. Intervals are in the time zone's local time, "
            "from " code { "00:00" } " to " code { "24:00" } ", and never run past midnight." }
        @if errors.is_some() { div.error-summary role="alert" { "The business hours were not changed: see below." } }
        @if manage {
            form.card #business-hours method="post" action=(PATH) novalidate {
                (csrf(s))
                div.field {
                    label for="timezone" { "Time zone " span.hint { "(IANA, such as Europe/Berlin)" } }
                    input #timezone type="text" name="timezone" value=(e.timezone) aria-invalid=[invalid(tz_error.as_deref())]
                        aria-describedby=[tz_error.as_ref().map(|_| "timezone-error")];
                    (field_error("timezone", tz_error.as_deref()))
                }
                fieldset #days aria-describedby=[days_error.as_ref().map(|_| "days-error")] {
                    legend { "Open hours " span.hint { "(such as 09:00-12:00, 13:00-17:00; empty: closed)" } }
                    (field_error("days", days_error.as_deref()))
                    div.row {
                        @for (day, name) in WEEKDAYS.iter().zip(DAY_NAMES) {
                            @let id = format!("days-{day}");
                            div.field {
                                label for=(id) { (name) }
                                input id=(id) type="text" name={ "days." (day) } value=(e.days.get(*day).map_or("", String::as_str))
                                    aria-invalid=[invalid(days_error.as_deref())];
                            }
                        }
                    }
                }
                div.field {
                    label for="holidays" { "Holidays " span.hint { "(YYYY-MM-DD, one per line)" } }
                    textarea #holidays name="holidays" rows="3" aria-invalid=[invalid(holidays_error.as_deref())]
                        aria-describedby=[holidays_error.as_ref().map(|_| "holidays-error")] { (e.holidays) }
                    (field_error("holidays", holidays_error.as_deref()))
                }
                button type="submit" { "Save business hours" }
            }
        } @else {
            section.card { (summary(e)) }
        }
    };
    HttpResponse::build(status)
        .insert_header(CacheControl(vec![CacheDirective::NoStore]))
        .content_type("text/html; charset=utf-8")
        .body(page("Business hours", PATH, s, body).into_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_form_text_becomes_the_record_and_back() {
        let mut days = BTreeMap::new();
        days.insert("mon".to_owned(), " 09:00-12:00, 13:00 – 17:00 ".to_owned());
        days.insert("tue".to_owned(), String::new());
        days.insert("wed".to_owned(), "9to5".to_owned());
        let e =
            Entered { timezone: "Europe/Berlin".into(), days, holidays: "2026-12-24\n2026-12-25, 2026-12-31".into() };
        let r = e.record();
        assert_eq!(r.days["mon"], [["09:00", "12:00"], ["13:00", "17:00"]]);
        assert_eq!(r.days["wed"], [["9to5"]], "passed on for the domain to refuse");
        assert!(!r.days.contains_key("tue"));
        assert_eq!(r.holidays, ["2026-12-24", "2026-12-25", "2026-12-31"]);
        let back = Entered::of(&BusinessHoursRecord { days: r.days.clone(), ..r });
        assert_eq!(back.days["mon"], "09:00-12:00, 13:00-17:00");
        assert_eq!(back.days["tue"], "");
    }
}

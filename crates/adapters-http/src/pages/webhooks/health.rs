//! The destination page's figures (the same as `GET /v1/webhooks/{id}/stats`: the last 24 hours)
//! and its controls as the integrator set them.

use domain::webhooks::controls::DeliveryOrdering;
use domain::webhooks::stats::DestinationStats;
use domain::webhooks::WebhookDestination;
use maud::{html, Markup};

use crate::pages::layout::time;

/// The "Health" section.
pub fn health_section(d: &WebhookDestination, stats: Option<&DestinationStats>) -> Markup {
    let c = &d.controls;
    let ms = |v: Option<u64>| v.map_or_else(|| "—".to_owned(), |v| format!("{v} ms"));
    html! {
        section.card #health aria-labelledby="health-title" {
            h2 #health-title { "Health (last 24 hours)" }
            @if let Some(st) = stats {
                dl.figures {
                    div { dt { "Delivered" } dd #stat-delivered { (st.delivered) } }
                    div { dt { "Failed attempts" } dd #stat-failed { (st.failed_attempts) } }
                    div { dt { "Waiting" } dd #stat-pending { (st.pending) } }
                    div { dt { "Given up" } dd #stat-exhausted { (st.exhausted) } }
                    div { dt { "Success rate" } dd #stat-success { (format!("{:.1} %", st.success_rate * 100.0)) } }
                    div { dt { "Latency p50 / p95" } dd #stat-latency { (ms(st.latency_ms.p50)) " / " (ms(st.latency_ms.p95)) } }
                    div { dt { "Pace now" } dd #stat-pace {
                        (st.pace.max_in_flight) " at once, " (format!("{:.0}", st.pace.rate_per_second)) " per second"
                        @if let Some(h) = st.pace.held_until { " (held until " (time(h)) ")" }
                    } }
                }
                @if let Some(f) = &st.last_failure {
                    p #stat-last-failure {
                        "Last failure " (time(f.at)) ": "
                        @if let Some(code) = f.status { "HTTP " (code) " — " }
                        span.mono { (f.message) }
                    }
                }
            } @else {
                p.muted { "The figures cannot be read right now." }
            }
            p.muted {
                "wms adapts its pace to what the endpoint shows it can take: it sends more while answers "
                "come back 2xx in time and less at once on 429, 503, timeouts and refused connections."
            }
            h3 { "Controls" }
            ul #controls {
                li { "Rate limit: " (c.rate_limit_per_second.map_or_else(|| "none (adaptive)".to_owned(), |r| format!("{r} per second"))) }
                li { "In flight at once: " (c.max_in_flight.map_or_else(|| "no cap (adaptive)".to_owned(), |r| r.to_string())) }
                li { "Ordering: " (match c.ordering { DeliveryOrdering::None => "none", DeliveryOrdering::PerThread => "per thread" }) }
                li { "Filter: "
                    @match &c.filter {
                        None => { "none" }
                        Some(f) => {
                            @if !f.channel_ids.is_empty() { "channels " (f.channel_ids.iter().map(i64::to_string).collect::<Vec<_>>().join(", ")) " " }
                            @if !f.labels.is_empty() { "labels " (f.labels.join(", ")) }
                        }
                    }
                }
                li { "Static headers: "
                    @if c.headers.is_empty() { "none" } @else { span.mono { (c.headers.keys().cloned().collect::<Vec<_>>().join(", ")) } }
                }
            }
            p.muted { "Change them in " a href="#edit-title" { "Edit" } " below, or with " code { "PATCH /v1/webhooks/" (d.id.0) } "." }
        }
    }
}

//! The CSV files of the Analytics page (RFC 4180: CRLF line ends, quoted when needed). Cells that
//! a spreadsheet would run as a formula (`=`, `+`, `-`, `@`, tab, CR) are prefixed with `'`: the
//! country is typed by people and must not become code in someone's spreadsheet (OWASP "CSV
//! injection").

use std::fmt::Write;

use super::model::TopCountries;
use crate::assistant::WhatsappAnalytics;

/// The daily series: one row per day of the range, zero-filled, oldest first.
pub fn daily_series(analytics: &WhatsappAnalytics) -> String {
    let mut out = String::from("date,sent,delivered,read,failed,delivery_rate,read_rate\r\n");
    for d in &analytics.daily {
        let c = d.counts;
        let _ = write!(
            out,
            "{},{},{},{},{},{},{}\r\n",
            d.date,
            c.sent,
            c.delivered,
            c.read,
            c.failed,
            rate(d.delivery_rate),
            rate(d.read_rate)
        );
    }
    out
}

/// The top countries, busiest first.
pub fn top_countries(t: &TopCountries) -> String {
    let mut out = String::from("country,contacts,inbound,sent,delivered,read,failed,delivery_rate,read_rate\r\n");
    for r in &t.rows {
        let c = r.outbound;
        let _ = write!(
            out,
            "{},{},{},{},{},{},{},{},{}\r\n",
            cell(r.country.as_deref().unwrap_or("unknown")),
            r.contacts,
            r.inbound,
            c.sent,
            c.delivered,
            c.read,
            c.failed,
            rate(c.delivery_rate()),
            rate(c.read_rate())
        );
    }
    out
}

/// A rate as a fraction with 4 places; empty when there is nothing to divide by.
fn rate(r: Option<f64>) -> String {
    r.map(|r| format!("{r:.4}")).unwrap_or_default()
}

/// A text cell, neutralised and quoted as needed.
pub fn cell(raw: &str) -> String {
    let guarded = if raw.starts_with(['=', '+', '-', '@', '\t', '\r']) { format!("'{raw}") } else { raw.to_owned() };
    if guarded.contains([',', '"', '\r', '\n']) {
        format!("\"{}\"", guarded.replace('"', "\"\""))
    } else {
        guarded
    }
}

#[cfg(test)]
mod tests {
    use time::macros::date;

    use super::*;
    use crate::analytics::CountryFigures;
    use crate::assistant::{DailyDelivery, DeliveryCounts};

    #[test]
    fn the_daily_series_has_a_row_per_day_and_empty_rates_without_a_divisor() {
        let counts = DeliveryCounts { sent: 4, delivered: 3, read: 1, failed: 1 };
        let day = |date, counts: DeliveryCounts| DailyDelivery {
            date,
            counts,
            delivery_rate: counts.delivery_rate(),
            read_rate: counts.read_rate(),
        };
        let a = WhatsappAnalytics {
            totals: counts,
            delivery_rate: counts.delivery_rate(),
            read_rate: counts.read_rate(),
            daily: vec![day(date!(2026 - 11 - 19), DeliveryCounts::default()), day(date!(2026 - 11 - 20), counts)],
            definitions: Default::default(),
        };
        assert_eq!(
            daily_series(&a),
            "date,sent,delivered,read,failed,delivery_rate,read_rate\r\n\
             2026-11-19,0,0,0,0,,\r\n\
             2026-11-20,4,3,1,1,0.7500,0.3333\r\n"
        );
    }

    #[test]
    fn country_cells_cannot_become_formulas_and_unknown_is_named() {
        assert_eq!(cell("=HYPERLINK(\"x\")"), "\"'=HYPERLINK(\"\"x\"\")\"");
        assert_eq!(cell("-1"), "'-1");
        assert_eq!(cell("DE"), "DE");
        let t = TopCountries {
            from: date!(2026 - 11 - 14),
            to: date!(2026 - 11 - 20),
            time_zone: "UTC".into(),
            rows: vec![CountryFigures { country: None, contacts: 1, inbound: 2, outbound: DeliveryCounts::default() }],
        };
        assert!(top_countries(&t).ends_with("unknown,1,2,0,0,0,0,,\r\n"));
    }
}

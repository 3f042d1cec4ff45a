//! `/settings/workspace/reports`: the conversation report of a period (the figures of
//! `GET /v1/reports/conversations`, from the same service), a table per group, charts drawn on the
//! server (SVG) with the first response time distribution, and the same report as CSV for the
//! session ([`export`]), since `/v1` takes API keys only. The route entries decide who may see it
//! (`reports.read`).

pub mod chart;
pub mod export;
pub mod page;

use domain::reports::RawReportQuery;
use serde::Deserialize;

/// The page's path.
pub const PATH: &str = "/settings/workspace/reports";

/// The CSV download's path.
pub const CSV_PATH: &str = "/settings/workspace/reports/conversations.csv";

/// `?since&until&group_by&business_hours`, as the REST report takes them; the domain validates.
#[derive(Debug, Default, Clone, Deserialize)]
pub struct Selection {
    /// `YYYY-MM-DD` or an RFC 3339 instant; 30 days before `until` when blank.
    pub since: Option<String>,
    /// `YYYY-MM-DD` or an RFC 3339 instant; now when blank.
    pub until: Option<String>,
    /// `none`, `agent`, `team`, `label` or `channel`.
    pub group_by: Option<String>,
    /// `true` (the checkbox) or absent.
    pub business_hours: Option<String>,
}

impl Selection {
    /// The report's query as received (blank fields are absent).
    pub fn raw(&self) -> RawReportQuery {
        let given = |v: &Option<String>| v.as_deref().map(str::trim).filter(|v| !v.is_empty()).map(str::to_owned);
        RawReportQuery {
            since: given(&self.since),
            until: given(&self.until),
            group_by: given(&self.group_by),
            business_hours: given(&self.business_hours),
        }
    }

    /// The same selection with another grouping.
    pub fn grouped(&self, group_by: &str) -> RawReportQuery {
        RawReportQuery { group_by: Some(group_by.to_owned()), ..self.raw() }
    }

    /// The query string of the selection, for the CSV link.
    pub fn query(&self) -> String {
        let raw = self.raw();
        let mut q = form_urlencoded::Serializer::new(String::new());
        for (k, v) in [
            ("since", raw.since),
            ("until", raw.until),
            ("group_by", raw.group_by),
            ("business_hours", raw.business_hours),
        ] {
            if let Some(v) = v {
                q.append_pair(k, &v);
            }
        }
        q.finish()
    }
}

/// A duration in seconds for people: `45s`, `12m 5s`, `3h 20m`, `2d 4h`.
pub fn duration(seconds: i64) -> String {
    let s = seconds.max(0);
    match s {
        0..=59 => format!("{s}s"),
        60..=3599 => format!("{}m {}s", s / 60, s % 60),
        3600..=86_399 => format!("{}h {}m", s / 3600, s % 3600 / 60),
        _ => format!("{}d {}h", s / 86_400, s % 86_400 / 3600),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_in_their_largest_units() {
        assert_eq!(
            [0, 45, 60, 725, 3600, 12_000, 86_400, 187_200].map(duration),
            ["0s", "45s", "1m 0s", "12m 5s", "1h 0m", "3h 20m", "1d 0h", "2d 4h"]
        );
    }

    #[test]
    fn blank_fields_are_absent_and_the_link_keeps_the_rest() {
        let s = Selection {
            since: Some("2026-11-01".into()),
            until: Some(" ".into()),
            group_by: Some("label".into()),
            business_hours: Some("true".into()),
        };
        assert_eq!(s.raw().until, None);
        assert_eq!(s.query(), "since=2026-11-01&group_by=label&business_hours=true");
        assert_eq!(s.grouped("none").group_by.as_deref(), Some("none"));
    }
}

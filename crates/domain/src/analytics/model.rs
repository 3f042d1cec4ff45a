//! Analytics values: the range selector and the top-countries breakdown.

use time::Date;

use crate::assistant::DeliveryCounts;

/// A range of the Analytics page and the assistant's tool: 7, 14, 30, 60 or 90 days.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AnalyticsRange {
    /// The last 7 days (the default).
    #[default]
    Days7,
    /// The last 14 days.
    Days14,
    /// The last 30 days.
    Days30,
    /// The last 60 days.
    Days60,
    /// The last 90 days.
    Days90,
}

impl AnalyticsRange {
    /// Every range, shortest first.
    pub const ALL: [AnalyticsRange; 5] = [
        AnalyticsRange::Days7,
        AnalyticsRange::Days14,
        AnalyticsRange::Days30,
        AnalyticsRange::Days60,
        AnalyticsRange::Days90,
    ];

    /// Days covered, today included.
    pub fn days(self) -> u16 {
        match self {
            AnalyticsRange::Days7 => 7,
            AnalyticsRange::Days14 => 14,
            AnalyticsRange::Days30 => 30,
            AnalyticsRange::Days60 => 60,
            AnalyticsRange::Days90 => 90,
        }
    }

    /// The wire name (`7d`).
    pub fn as_str(self) -> &'static str {
        match self {
            AnalyticsRange::Days7 => "7d",
            AnalyticsRange::Days14 => "14d",
            AnalyticsRange::Days30 => "30d",
            AnalyticsRange::Days60 => "60d",
            AnalyticsRange::Days90 => "90d",
        }
    }

    /// Parses `7d` or `7`; `None` for anything else.
    pub fn parse(raw: &str) -> Option<Self> {
        let raw = raw.trim();
        Self::ALL.into_iter().find(|r| r.as_str() == raw || r.as_str().trim_end_matches('d') == raw)
    }
}

/// The figures of one contact country over a period.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CountryFigures {
    /// The contacts' country as recorded (ISO 3166-1 alpha-2 by convention); `None` when unknown.
    pub country: Option<String>,
    /// Distinct contacts of that country with a message in the period.
    pub contacts: i64,
    /// Messages they sent to the workspace.
    pub inbound: i64,
    /// The workspace's outbound messages to them, by the status they reached.
    pub outbound: DeliveryCounts,
}

/// The top-countries breakdown of a selection, busiest first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopCountries {
    /// First day, inclusive.
    pub from: Date,
    /// Last day (today), inclusive.
    pub to: Date,
    /// The workspace's time zone, whose calendar days these are.
    pub time_zone: String,
    /// One row per country, by contacts then outbound sent, descending; unknown country last.
    pub rows: Vec<CountryFigures>,
}

impl TopCountries {
    /// Orders the rows as documented: busiest first, the unknown country last.
    pub fn ranked(mut self) -> Self {
        self.rows.sort_by(|a, b| {
            a.country
                .is_none()
                .cmp(&b.country.is_none())
                .then(b.contacts.cmp(&a.contacts))
                .then(b.outbound.sent.cmp(&a.outbound.sent))
                .then(a.country.cmp(&b.country))
        });
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_parse_with_or_without_the_unit() {
        assert_eq!(AnalyticsRange::parse("30d"), Some(AnalyticsRange::Days30));
        assert_eq!(AnalyticsRange::parse("90"), Some(AnalyticsRange::Days90));
        assert_eq!(AnalyticsRange::parse("8d"), None);
        assert_eq!(AnalyticsRange::default().days(), 7);
    }

    #[test]
    fn countries_rank_by_contacts_with_unknown_last() {
        let row = |country: Option<&str>, contacts, sent| CountryFigures {
            country: country.map(str::to_owned),
            contacts,
            inbound: 0,
            outbound: DeliveryCounts { sent, ..DeliveryCounts::default() },
        };
        let date = time::macros::date!(2026 - 11 - 20);
        let t = TopCountries {
            from: date,
            to: date,
            time_zone: "UTC".into(),
            rows: vec![row(None, 99, 0), row(Some("DE"), 2, 5), row(Some("BR"), 7, 1), row(Some("AT"), 2, 9)],
        }
        .ranked();
        let order: Vec<Option<&str>> = t.rows.iter().map(|r| r.country.as_deref()).collect();
        assert_eq!(order, [Some("BR"), Some("AT"), Some("DE"), None]);
    }
}

//! `GET /v1/reports/conversations.csv`: the report's groups as rows (RFC 4180, CRLF), an empty
//! cell for a null.

use std::fmt::Write;

use super::report::{ConversationReport, DurationFigure};
use crate::analytics::csv::cell;

/// The header row's columns.
pub const COLUMNS: &str = "key_type,key_id,key_name,conversations,incoming_messages,outgoing_messages,resolutions,\
first_response_count,first_response_avg,first_response_median,first_response_p90,\
first_response_ai_count,first_response_ai_avg,first_response_ai_median,first_response_ai_p90,\
reply_count,reply_avg,reply_median,reply_p90,\
resolution_count,resolution_avg,resolution_median,resolution_p90,sla_hit,sla_missed";

/// The report as CSV: the header, then one row per group.
pub fn conversation_report(report: &ConversationReport) -> String {
    let mut out = format!("{COLUMNS}\r\n");
    for g in &report.groups {
        let (kind, id, name) = match &g.key {
            Some(k) => (k.kind.to_owned(), k.id.to_string(), cell(&k.name)),
            None => (String::new(), String::new(), String::new()),
        };
        let _ = write!(
            out,
            "{kind},{id},{name},{},{},{},{},{},{},{},{},{},{}\r\n",
            g.conversations,
            g.incoming_messages,
            g.outgoing_messages,
            g.resolutions,
            figure(&g.first_response),
            figure(&g.first_response_ai),
            figure(&g.reply),
            figure(&g.resolution),
            g.sla.hit,
            g.sla.missed
        );
    }
    out
}

fn figure(f: &DurationFigure) -> String {
    let opt = |v: Option<i64>| v.map(|v| v.to_string()).unwrap_or_default();
    format!("{},{},{},{}", f.count, f.avg.map(|a| a.to_string()).unwrap_or_default(), opt(f.median), opt(f.p90))
}

#[cfg(test)]
mod tests {
    use time::macros::datetime;

    use super::*;
    use crate::reports::{GroupKey, ReportGroup};

    #[test]
    fn rows_follow_the_header_and_nulls_are_empty() {
        let mut g = ReportGroup::empty(Some(GroupKey { kind: "label", id: 4, name: "=vip, gold".into() }));
        g.conversations = 2;
        g.reply = DurationFigure::of(vec![60, 90]);
        let r = ConversationReport {
            since: datetime!(2026-11-01 00:00:00 UTC),
            until: datetime!(2026-11-02 00:00:00 UTC),
            business_hours: false,
            groups: vec![ReportGroup::empty(None), g],
        };
        let csv = conversation_report(&r);
        let lines: Vec<&str> = csv.split("\r\n").collect();
        assert_eq!(lines[0].split(',').count(), 25);
        assert_eq!(lines[1], ",,,0,0,0,0,0,,,,0,,,,0,,,,0,,,,0,0");
        assert_eq!(lines[2], "label,4,\"'=vip, gold\",2,0,0,0,0,,,,0,,,,2,75,60,90,0,,,,0,0");
    }
}

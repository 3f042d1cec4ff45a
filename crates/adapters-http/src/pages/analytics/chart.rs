//! The combo chart, as SVG drawn on the server: per day, layered bars for sent ⊇ delivered ⊇ read
//! and a bar for failed (left axis, messages), and lines for the delivery and read rates (right
//! axis, percent). Colours are SVG attributes, not inline styles, which the CSP forbids.

use domain::assistant::DailyDelivery;
use maud::{html, Markup};

const W: f64 = 960.0;
const H: f64 = 340.0;
const LEFT: f64 = 56.0;
const RIGHT: f64 = 52.0;
const TOP: f64 = 16.0;
const BOTTOM: f64 = 40.0;

/// Colours, shared with the legend's CSS swatches.
const SENT: &str = "#9db7ea";
const DELIVERED: &str = "#4f7fd9";
const READ: &str = "#1f3f8f";
const FAILED: &str = "#d9534f";
const DELIVERY_RATE: &str = "#18794e";
const READ_RATE: &str = "#c27c0e";

/// A round upper bound for the left axis and its tick step (the reports page's charts too).
pub(crate) fn scale(max: i64) -> (f64, f64) {
    let max = max.max(1) as f64;
    let raw = max / 4.0;
    let mag = 10f64.powf(raw.log10().floor());
    // Counts are whole: no step below 1, and 2.5 only where it stays whole.
    let steps: &[f64] = if mag >= 10.0 { &[1.0, 2.0, 2.5, 5.0, 10.0] } else { &[1.0, 2.0, 5.0, 10.0] };
    let step = steps.iter().map(|m| m * mag).find(|s| *s >= raw).unwrap_or(10.0 * mag).max(1.0);
    ((max / step).ceil() * step, step)
}

fn pct(r: Option<f64>) -> String {
    r.map_or_else(|| "n/a".to_owned(), |r| format!("{:.1}%", r * 100.0))
}

/// A coordinate as the chart writes it: one decimal.
pub(crate) fn at(v: f64) -> String {
    format!("{v:.1}")
}

/// The chart of a daily series. Every element is written with maud, which escapes what it
/// interpolates (the per-day titles carry dates and figures).
pub fn combo_chart(days: &[DailyDelivery], caption: &str) -> Markup {
    let n = days.len().max(1) as f64;
    let plot_w = W - LEFT - RIGHT;
    let plot_h = H - TOP - BOTTOM;
    let base = TOP + plot_h;
    let max = days.iter().map(|d| d.counts.sent.max(d.counts.failed)).max().unwrap_or(0);
    let (top, step) = scale(max);
    let y = |v: f64| base - (v / top) * plot_h;
    let y_rate = |r: f64| base - r * plot_h;
    let group = plot_w / n;
    let gap = (group * 0.18).min(6.0);
    let bar_w = ((group - gap) * 0.72).max(0.8);
    let fail_w = ((group - gap) * 0.28).max(0.6);
    let left_ticks: Vec<f64> =
        std::iter::successors(Some(0.0), |v| Some(v + step)).take_while(|v| *v <= top + 0.5).collect();
    let rate_lines = [(DELIVERY_RATE, true), (READ_RATE, false)].map(|(colour, delivery)| {
        (
            colour,
            rate_points(
                days,
                |d| if delivery { d.delivery_rate } else { d.read_rate },
                |i| LEFT + i as f64 * group + group / 2.0,
                y_rate,
            ),
        )
    });
    // Date labels, at most about ten.
    let every = (days.len() / 10).max(1);
    let labelled = days.iter().enumerate().filter(|(i, _)| i % every == 0 || *i + 1 == days.len());

    html! {
        figure.card {
            svg.chart #analytics-chart viewBox={ "0 0 " (W) " " (H) } role="img" aria-labelledby="chart-title chart-desc" xmlns="http://www.w3.org/2000/svg" {
                title #chart-title { (caption) }
                desc #chart-desc { "Bars: messages sent, delivered, read and failed per day. Lines: delivery rate and read rate in percent (right axis). The table below lists the same figures." }
                // Grid and left axis.
                @for v in &left_ticks {
                    line x1=(LEFT) x2=(W - RIGHT) y1=(at(y(*v))) y2=(at(y(*v))) stroke="#e3e7ee" {}
                    text x=(LEFT - 6.0) y=(at(y(*v) + 4.0)) text-anchor="end" font-size="11" fill="#5b6678" { (v) }
                }
                // Right axis: rates.
                @for p in [0, 25, 50, 75, 100] {
                    text x=(W - RIGHT + 6.0) y=(at(y_rate(f64::from(p) / 100.0) + 4.0)) font-size="11" fill="#5b6678" { (p) "%" }
                }
                // Bars.
                @for (i, d) in days.iter().enumerate() {
                    @let x0 = LEFT + i as f64 * group + gap / 2.0;
                    @let c = d.counts;
                    g {
                        title {
                            (d.date) ": " (c.sent) " sent, " (c.delivered) " delivered, " (c.read) " read, " (c.failed)
                            " failed; delivery rate " (pct(d.delivery_rate)) ", read rate " (pct(d.read_rate))
                        }
                        @for (value, colour, inset) in [(c.sent, SENT, 0.0), (c.delivered, DELIVERED, 0.18), (c.read, READ, 0.36)] {
                            @if value > 0 {
                                @let w = bar_w * (1.0 - inset);
                                @let top_y = y(value as f64);
                                rect x=(at(x0 + (bar_w - w) / 2.0)) y=(at(top_y)) width=(at(w)) height=(at(base - top_y)) fill=(colour) {}
                            }
                        }
                        @if c.failed > 0 {
                            @let top_y = y(c.failed as f64);
                            rect x=(at(x0 + bar_w)) y=(at(top_y)) width=(at(fail_w)) height=(at(base - top_y)) fill=(FAILED) {}
                        }
                    }
                }
                // Rate lines, broken on days with nothing to divide by.
                @for (colour, (segments, dots)) in &rate_lines {
                    @for segment in segments.iter().filter(|s| s.len() > 1) {
                        polyline points=(segment.join(" ")) fill="none" stroke=(colour) stroke-width="2" {}
                    }
                    @for (cx, cy) in dots {
                        circle cx=(at(*cx)) cy=(at(*cy)) r="2.5" fill=(colour) {}
                    }
                }
                @for (i, d) in labelled {
                    text x=(at(LEFT + i as f64 * group + group / 2.0)) y=(H - BOTTOM + 16.0) text-anchor="middle" font-size="11" fill="#5b6678" {
                        (format!("{:02}-{:02}", u8::from(d.date.month()), d.date.day()))
                    }
                }
                line x1=(LEFT) x2=(W - RIGHT) y1=(base) y2=(base) stroke="#9aa5b5" {}
            }
            figcaption {
                ul.legend {
                    li { span.swatch.sw-sent {} "Sent" }
                    li { span.swatch.sw-delivered {} "Delivered" }
                    li { span.swatch.sw-read {} "Read" }
                    li { span.swatch.sw-failed {} "Failed" }
                    li { span.swatch.line.sw-drate {} "Delivery rate (right axis)" }
                    li { span.swatch.line.sw-rrate {} "Read rate (right axis)" }
                }
            }
        }
    }
}

/// The points of one rate line: its segments (`x,y` pairs, broken on days without a rate) and a
/// dot per day that has one.
type RateLine = (Vec<Vec<String>>, Vec<(f64, f64)>);

fn rate_points(
    days: &[DailyDelivery],
    rate: impl Fn(&DailyDelivery) -> Option<f64>,
    x: impl Fn(usize) -> f64,
    y: impl Fn(f64) -> f64,
) -> RateLine {
    let mut segments = vec![Vec::new()];
    let mut dots = Vec::new();
    for (i, d) in days.iter().enumerate() {
        match rate(d) {
            Some(r) => {
                let (cx, cy) = (x(i), y(r));
                if let Some(segment) = segments.last_mut() {
                    segment.push(format!("{cx:.1},{cy:.1}"));
                }
                dots.push((cx, cy));
            }
            None => segments.push(Vec::new()),
        }
    }
    (segments, dots)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_left_axis_ends_on_a_round_number() {
        assert_eq!(scale(0), (1.0, 1.0));
        assert_eq!(scale(10), (10.0, 5.0));
        assert_eq!(scale(37), (40.0, 10.0));
        assert_eq!(scale(950), (1000.0, 250.0));
    }

    fn day(date: time::Date, sent: i64, delivered: i64, read: i64, failed: i64) -> DailyDelivery {
        let counts = domain::assistant::DeliveryCounts { sent, delivered, read, failed };
        DailyDelivery { date, counts, delivery_rate: counts.delivery_rate(), read_rate: counts.read_rate() }
    }

    #[test]
    fn the_chart_draws_bars_lines_and_escaped_text() {
        let d1 = time::macros::date!(2026 - 11 - 20);
        let days = [
            day(d1, 10, 8, 4, 1),
            day(time::macros::date!(2026 - 11 - 21), 0, 0, 0, 0),
            day(time::macros::date!(2026 - 11 - 22), 5, 5, 5, 0),
        ];
        let svg = combo_chart(&days, "Last <3> days & more").into_string();
        assert!(svg.contains("Last &lt;3&gt; days &amp; more"), "{svg}");
        assert_eq!(svg.matches("<rect ").count(), 4 + 3, "three layered bars and a failed bar, then three bars: {svg}");
        assert_eq!(svg.matches("<circle ").count(), 2 * 2, "a dot per day with a rate, per line: {svg}");
        assert_eq!(
            svg.matches("<polyline ").count(),
            0,
            "the empty middle day breaks both lines into single points: {svg}"
        );
        assert!(svg.contains("<title>2026-11-20: 10 sent, 8 delivered, 4 read, 1 failed; delivery rate 80.0%, read rate 50.0%</title>"), "{svg}");
        assert!(svg.contains(">11-20</text>"), "{svg}");
    }
}

//! The combo chart, as SVG drawn on the server: per day, layered bars for sent ⊇ delivered ⊇ read
//! and a bar for failed (left axis, messages), and lines for the delivery and read rates (right
//! axis, percent). Colours are SVG attributes, not inline styles, which the CSP forbids.

use std::fmt::Write;

use domain::assistant::DailyDelivery;
use maud::{html, Markup, PreEscaped};

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

/// A round upper bound for the left axis and its tick step.
fn scale(max: i64) -> (f64, f64) {
    let max = max.max(1) as f64;
    let raw = max / 4.0;
    let mag = 10f64.powf(raw.log10().floor());
    // Counts are whole: no step below 1, and 2.5 only where it stays whole.
    let steps: &[f64] = if mag >= 10.0 { &[1.0, 2.0, 2.5, 5.0, 10.0] } else { &[1.0, 2.0, 5.0, 10.0] };
    let step = steps.iter().map(|m| m * mag).find(|s| *s >= raw).unwrap_or(10.0 * mag).max(1.0);
    ((max / step).ceil() * step, step)
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

fn pct(r: Option<f64>) -> String {
    r.map_or_else(|| "n/a".to_owned(), |r| format!("{:.1}%", r * 100.0))
}

/// The chart of a daily series.
pub fn combo_chart(days: &[DailyDelivery], caption: &str) -> Markup {
    let n = days.len().max(1) as f64;
    let plot_w = W - LEFT - RIGHT;
    let plot_h = H - TOP - BOTTOM;
    let max = days.iter().map(|d| d.counts.sent.max(d.counts.failed)).max().unwrap_or(0);
    let (top, step) = scale(max);
    let y = |v: f64| TOP + plot_h - (v / top) * plot_h;
    let y_rate = |r: f64| TOP + plot_h - r * plot_h;
    let group = plot_w / n;
    let gap = (group * 0.18).min(6.0);
    let bar_w = ((group - gap) * 0.72).max(0.8);
    let fail_w = ((group - gap) * 0.28).max(0.6);

    let mut svg = String::new();
    // Grid and left axis.
    let mut v = 0.0;
    while v <= top + 0.5 {
        let yy = y(v);
        let _ = write!(
            svg,
            r##"<line x1="{LEFT}" x2="{x2}" y1="{yy:.1}" y2="{yy:.1}" stroke="#e3e7ee"/><text x="{tx}" y="{ty:.1}" text-anchor="end" font-size="11" fill="#5b6678">{v}</text>"##,
            x2 = W - RIGHT,
            tx = LEFT - 6.0,
            ty = yy + 4.0,
        );
        v += step;
    }
    // Right axis: rates.
    for p in [0, 25, 50, 75, 100] {
        let yy = y_rate(f64::from(p) / 100.0);
        let _ = write!(
            svg,
            r##"<text x="{tx}" y="{ty:.1}" font-size="11" fill="#5b6678">{p}%</text>"##,
            tx = W - RIGHT + 6.0,
            ty = yy + 4.0
        );
    }
    // Bars.
    for (i, d) in days.iter().enumerate() {
        let x0 = LEFT + i as f64 * group + gap / 2.0;
        let c = d.counts;
        let label = format!(
            "{}: {} sent, {} delivered, {} read, {} failed; delivery rate {}, read rate {}",
            d.date,
            c.sent,
            c.delivered,
            c.read,
            c.failed,
            pct(d.delivery_rate),
            pct(d.read_rate)
        );
        let _ = write!(svg, "<g><title>{}</title>", esc(&label));
        for (value, colour, inset) in [(c.sent, SENT, 0.0), (c.delivered, DELIVERED, 0.18), (c.read, READ, 0.36)] {
            if value > 0 {
                let w = bar_w * (1.0 - inset);
                let x = x0 + (bar_w - w) / 2.0;
                let yy = y(value as f64);
                let _ = write!(
                    svg,
                    r#"<rect x="{x:.1}" y="{yy:.1}" width="{w:.1}" height="{h:.1}" fill="{colour}"/>"#,
                    h = TOP + plot_h - yy
                );
            }
        }
        if c.failed > 0 {
            let yy = y(c.failed as f64);
            let _ = write!(
                svg,
                r#"<rect x="{x:.1}" y="{yy:.1}" width="{fail_w:.1}" height="{h:.1}" fill="{FAILED}"/>"#,
                x = x0 + bar_w,
                h = TOP + plot_h - yy
            );
        }
        svg.push_str("</g>");
    }
    // Rate lines, broken on days with nothing to divide by.
    for (colour, rate) in [(DELIVERY_RATE, 0usize), (READ_RATE, 1usize)] {
        let mut segment: Vec<String> = Vec::new();
        let flush = |segment: &mut Vec<String>, svg: &mut String| {
            if segment.len() > 1 {
                let _ = write!(
                    svg,
                    r#"<polyline points="{}" fill="none" stroke="{colour}" stroke-width="2"/>"#,
                    segment.join(" ")
                );
            }
            segment.clear();
        };
        for (i, d) in days.iter().enumerate() {
            let r = if rate == 0 { d.delivery_rate } else { d.read_rate };
            let cx = LEFT + i as f64 * group + group / 2.0;
            match r {
                Some(r) => {
                    let cy = y_rate(r);
                    segment.push(format!("{cx:.1},{cy:.1}"));
                    let _ = write!(svg, r#"<circle cx="{cx:.1}" cy="{cy:.1}" r="2.5" fill="{colour}"/>"#);
                }
                None => flush(&mut segment, &mut svg),
            }
        }
        flush(&mut segment, &mut svg);
    }
    // Date labels, at most about ten.
    let every = (days.len() / 10).max(1);
    for (i, d) in days.iter().enumerate().filter(|(i, _)| i % every == 0 || *i + 1 == days.len()) {
        let cx = LEFT + i as f64 * group + group / 2.0;
        let _ = write!(
            svg,
            r##"<text x="{cx:.1}" y="{ty}" text-anchor="middle" font-size="11" fill="#5b6678">{:02}-{:02}</text>"##,
            u8::from(d.date.month()),
            d.date.day(),
            ty = H - BOTTOM + 16.0
        );
    }
    let _ = write!(
        svg,
        r##"<line x1="{LEFT}" x2="{x2}" y1="{b}" y2="{b}" stroke="#9aa5b5"/>"##,
        x2 = W - RIGHT,
        b = TOP + plot_h
    );
    html! {
        figure.card {
            svg.chart #analytics-chart viewBox={ "0 0 " (W) " " (H) } role="img" aria-labelledby="chart-title chart-desc" xmlns="http://www.w3.org/2000/svg" {
                title #chart-title { (caption) }
                desc #chart-desc { "Bars: messages sent, delivered, read and failed per day. Lines: delivery rate and read rate in percent (right axis). The table below lists the same figures." }
                (PreEscaped(svg))
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
}

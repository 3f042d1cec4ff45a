//! The reports page's charts, as SVG drawn on the server like the analytics chart (colours are SVG
//! attributes; the CSP forbids inline styles): the first response time distribution (a bar per
//! bucket for members and one for AI agents) and conversations and resolutions per group.

use domain::reports::{FirstResponseDistribution, ReportGroup};
use maud::{html, Markup};

use super::page::group_name;
use crate::pages::analytics::chart::{at, scale};

const W: f64 = 960.0;
const H: f64 = 300.0;
const LEFT: f64 = 56.0;
const RIGHT: f64 = 16.0;
const TOP: f64 = 16.0;
const BOTTOM: f64 = 40.0;

/// Colours, shared with the legend's CSS swatches.
const HUMAN: &str = "#4f7fd9";
const AI: &str = "#c27c0e";
const CONVERSATIONS: &str = "#4f7fd9";
const RESOLUTIONS: &str = "#18794e";

/// The horizontal grid and the left axis of counts up to `max`: the axis top and the lines.
fn grid(max: i64, plot_h: f64) -> (f64, Markup) {
    let (top, step) = scale(max);
    let base = TOP + plot_h;
    let ticks: Vec<f64> =
        std::iter::successors(Some(0.0), |v| Some(v + step)).take_while(|v| *v <= top + 0.5).collect();
    let markup = html! {
        @for v in &ticks {
            @let y = base - (v / top) * plot_h;
            line x1=(LEFT) x2=(W - RIGHT) y1=(at(y)) y2=(at(y)) stroke="#e3e7ee" {}
            text x=(LEFT - 6.0) y=(at(y + 4.0)) text-anchor="end" font-size="11" fill="#5b6678" { (v) }
        }
    };
    (top, markup)
}

/// Grouped bars: per slot (label, [(value, colour)]), with a title per slot. `id` names the SVG.
fn bars(
    id: &str,
    caption: &str,
    desc: &str,
    slots: &[(String, Vec<(i64, &str)>)],
    title: impl Fn(usize) -> String,
) -> Markup {
    let plot_h = H - TOP - BOTTOM;
    let base = TOP + plot_h;
    let max = slots.iter().flat_map(|s| s.1.iter().map(|v| v.0)).max().unwrap_or(0);
    let (top, grid) = grid(max, plot_h);
    let group = (W - LEFT - RIGHT) / slots.len().max(1) as f64;
    let per = slots.first().map_or(1, |s| s.1.len()).max(1) as f64;
    let bar_w = (group * 0.7 / per).max(1.0);
    html! {
        svg.chart id=(id) viewBox={ "0 0 " (W) " " (H) } role="img" aria-labelledby={ (id) "-title " (id) "-desc" } xmlns="http://www.w3.org/2000/svg" {
            title id={ (id) "-title" } { (caption) }
            desc id={ (id) "-desc" } { (desc) }
            (grid)
            @for (i, (label, values)) in slots.iter().enumerate() {
                @let x0 = LEFT + i as f64 * group + group * 0.15;
                g data-slot=(label) {
                    title { (title(i)) }
                    @for (j, (value, colour)) in values.iter().enumerate() {
                        @if *value > 0 {
                            @let y = base - (*value as f64 / top) * plot_h;
                            rect x=(at(x0 + j as f64 * bar_w)) y=(at(y)) width=(at(bar_w)) height=(at(base - y)) fill=(colour) data-value=(value) {}
                        }
                    }
                    text x=(at(LEFT + i as f64 * group + group / 2.0)) y=(H - BOTTOM + 16.0) text-anchor="middle" font-size="11" fill="#5b6678" { (label) }
                }
            }
            line x1=(LEFT) x2=(W - RIGHT) y1=(base) y2=(base) stroke="#9aa5b5" {}
        }
    }
}

/// The first response time histogram.
pub fn distribution_chart(d: &FirstResponseDistribution) -> Markup {
    let slots: Vec<(String, Vec<(i64, &str)>)> =
        d.buckets.iter().map(|b| (b.label.to_owned(), vec![(b.human, HUMAN), (b.ai, AI)])).collect();
    let title = |i: usize| {
        let b = &d.buckets[i];
        format!("{}: {} first responses by members, {} by AI agents", b.label, b.human, b.ai)
    };
    html! {
        figure.card {
            (bars("distribution-chart", "First response time distribution",
                "Bars: how many first responses by members and by AI agents took the time of each bucket. The table below lists the same figures.",
                &slots, title))
            figcaption {
                ul.legend {
                    li { span.swatch.sw-human {} "Members" }
                    li { span.swatch.sw-ai {} "AI agents" }
                }
            }
        }
    }
}

/// Conversations and resolutions per group.
pub fn groups_chart(groups: &[ReportGroup]) -> Markup {
    let slots: Vec<(String, Vec<(i64, &str)>)> = groups
        .iter()
        .map(|g| (group_name(g), vec![(g.conversations, CONVERSATIONS), (g.resolutions, RESOLUTIONS)]))
        .collect();
    let title = |i: usize| {
        let g = &groups[i];
        format!("{}: {} conversations, {} resolutions", group_name(g), g.conversations, g.resolutions)
    };
    html! {
        figure.card {
            (bars("groups-chart", "Conversations and resolutions per group",
                "Bars: conversations started and resolutions per group. The table above lists the same figures.",
                &slots, title))
            figcaption {
                ul.legend {
                    li { span.swatch.sw-conversations {} "Conversations" }
                    li { span.swatch.sw-resolutions {} "Resolutions" }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use domain::reports::{first_response_distribution, FirstResponseDurations};

    use super::*;

    #[test]
    fn the_histogram_draws_a_bar_per_non_empty_count_with_its_title() {
        let d = first_response_distribution(&FirstResponseDurations { human: vec![10, 20, 400], ai: vec![90_000] });
        let svg = distribution_chart(&d).into_string();
        assert_eq!(svg.matches("<rect ").count(), 3, "{svg}");
        assert!(svg.contains("<title>&lt;1m: 2 first responses by members, 0 by AI agents</title>"), "{svg}");
        assert!(svg.contains("data-slot=\"&gt;24h\""), "{svg}");
    }
}

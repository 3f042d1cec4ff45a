//! Shaping stored figures into the results of `get_channel_analytics` and
//! `get_contact_analytics`: zero-filled days, totals, rates, notes and the cost estimate.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use time::{Date, Duration};

use super::model::{
    Assignment, ChannelAnalytics, ChannelRef, ContactActivity, ContactCost, ContactDay, ContactReport, ContactSummary,
    DailyDelivery, DeliveryCounts, Lookup, Period, SupportTeam, WhatsappAnalytics,
};
use super::ports::{ChannelStats, ContactFacts, WhatsappDays};
use super::pricing;
use super::registry::ContactQuery;

/// A contact report lists at most this many conversations, latest activity first.
pub const MAX_CONVERSATIONS: usize = 50;

/// `days` days ending `today`, oldest first.
fn days_until(today: Date, days: u16) -> impl Iterator<Item = Date> {
    let first = today.checked_sub(Duration::days(i64::from(days.max(1)) - 1)).unwrap_or(today);
    (0..i64::from(days.max(1))).filter_map(move |i| first.checked_add(Duration::days(i)))
}

fn period(range: String, today: Date, days: u16, time_zone: String) -> Period {
    let from = days_until(today, days).next().unwrap_or(today);
    Period { range, from, to: today, time_zone }
}

const DEFINITIONS: &[(&str, &str)] = &[
    ("sent", "outbound messages whose status is sent, delivered or read (queued and failed ones are not sent)"),
    ("delivered", "outbound messages whose status is delivered or read"),
    ("read", "outbound messages whose status is read"),
    ("failed", "outbound messages whose status is failed"),
    ("delivery_rate", "delivered / sent, a fraction from 0 to 1; null when nothing was sent"),
    ("read_rate", "read / delivered, a fraction from 0 to 1; null when nothing was delivered"),
    ("day", "each message counts on the calendar day it was created, in the period's time zone"),
];

fn platform_name(t: crate::channels::ChannelType) -> &'static str {
    match t {
        crate::channels::ChannelType::Whatsapp => "WhatsApp",
        crate::channels::ChannelType::Messenger => "Messenger",
        crate::channels::ChannelType::Instagram => "Instagram",
    }
}

/// The page the Messenger and Instagram note points to (`docs/product/analytics-messenger-instagram.md`).
pub const MESSENGER_INSTAGRAM_DOCS: &str = "/docs/analytics-messenger-instagram";

/// Shapes stored figures into the `get_channel_analytics` result: one zero-filled point per day,
/// totals and rates. Public so that the Analytics page shows exactly what the tool answers.
pub fn channel_analytics(stats: ChannelStats, range: String, days: u16) -> ChannelAnalytics {
    match stats {
        ChannelStats::OtherPlatform(channel) => ChannelAnalytics::OtherPlatform {
            note: format!(
                "Detailed delivery statistics are available for WhatsApp channels only. For the {} channel \
                 \"{}\", {MESSENGER_INSTAGRAM_DOCS} explains where Meta shows that platform's insights, and the \
                 Analytics page at /analytics shows its contacts and messages by country.",
                platform_name(channel.channel_type),
                channel.display_name
            ),
            channel,
            analytics: None,
        },
        ChannelStats::Whatsapp { asked, data } => {
            let WhatsappDays { channels, time_zone, today, days: rows } = data;
            let by_day: HashMap<Date, DeliveryCounts> = rows.into_iter().collect();
            let mut totals = DeliveryCounts::default();
            let daily: Vec<DailyDelivery> = days_until(today, days)
                .map(|date| {
                    let counts = by_day.get(&date).copied().unwrap_or_default();
                    totals.add(&counts);
                    DailyDelivery { date, counts, delivery_rate: counts.delivery_rate(), read_rate: counts.read_rate() }
                })
                .collect();
            let note = channels.is_empty().then(|| "This workspace has no WhatsApp channel yet.".to_owned());
            ChannelAnalytics::Whatsapp {
                channel: asked,
                channels,
                period: period(range, today, days, time_zone),
                analytics: WhatsappAnalytics {
                    totals,
                    delivery_rate: totals.delivery_rate(),
                    read_rate: totals.read_rate(),
                    daily,
                    definitions: DEFINITIONS.iter().copied().collect(),
                },
                note,
            }
        }
    }
}

pub(super) fn contact_report(
    lookup: Lookup,
    contact: super::model::ContactProfile,
    q: &ContactQuery,
    facts: ContactFacts,
) -> ContactReport {
    let ContactFacts { time_zone, today, label_exists, threads, days: rows, responders } = facts;
    let mut notes = Vec::new();
    if let (Some(label), false) = (&q.label, label_exists) {
        notes.push(format!("This workspace has no label named \"{label}\", so no conversation matches it."));
    }

    let mut by_status: BTreeMap<String, i64> = BTreeMap::new();
    let mut channels: BTreeMap<i64, ChannelRef> = BTreeMap::new();
    let mut labels: BTreeSet<String> = BTreeSet::new();
    let mut assignments: Vec<Assignment> = Vec::new();
    for t in &threads {
        *by_status.entry(t.status.clone()).or_default() += 1;
        channels.entry(t.channel.id.0).or_insert_with(|| t.channel.clone());
        labels.extend(t.labels.iter().cloned());
        if let Some(a) = &t.assignee {
            match assignments.iter_mut().find(|x| x.assignee.kind == a.kind && x.assignee.id == a.id) {
                Some(x) => x.threads += 1,
                None => assignments.push(Assignment { assignee: a.clone(), threads: 1 }),
            }
        }
    }
    assignments.sort_by(|a, b| b.threads.cmp(&a.threads).then_with(|| a.assignee.name.cmp(&b.assignee.name)));
    let summary = ContactSummary {
        threads_total: threads.len() as i64,
        open: by_status.get("open").copied().unwrap_or(0),
        resolved: by_status.get("resolved").copied().unwrap_or(0),
        by_status,
        unread_messages: threads.iter().map(|t| t.unread_messages).sum(),
        channels_used: channels.into_values().collect(),
    };

    let by_day: HashMap<Date, ContactDay> = rows.into_iter().map(|d| (d.date, d)).collect();
    let daily: Vec<ContactDay> =
        days_until(today, q.days).map(|date| by_day.get(&date).copied().unwrap_or(ContactDay::empty(date))).collect();
    let sum = |f: fn(&ContactDay) -> i64| daily.iter().map(f).sum::<i64>();
    let billable = sum(|d| d.billable_templates);
    let time_based = ContactActivity {
        inbound: sum(|d| d.inbound),
        outbound: sum(|d| d.outbound),
        outbound_human: sum(|d| d.outbound_human),
        outbound_ai: sum(|d| d.outbound_ai),
        template_sends: sum(|d| d.template_sends),
        delivered: sum(|d| d.delivered),
        read: sum(|d| d.read),
        failed: sum(|d| d.failed),
        daily,
    };
    let (pricing_country, rate) = pricing::template_rate(contact.country.as_deref());
    let cost_based = ContactCost {
        estimated_outbound_cost_usd: pricing::estimate(billable, rate),
        template_count: billable,
        rate_per_template_usd: rate,
        pricing_country,
        disclaimer: pricing::DISCLAIMER,
    };

    let total = threads.len();
    let conversations: Vec<_> = threads.into_iter().take(MAX_CONVERSATIONS).collect();
    if total > MAX_CONVERSATIONS {
        notes.push(format!(
            "The contact has {total} conversations; the {MAX_CONVERSATIONS} with the latest activity are listed."
        ));
    }
    ContactReport {
        lookup,
        period: period(q.range.clone(), today, q.days, time_zone),
        label: q.label.clone(),
        contact,
        summary,
        time_based,
        cost_based,
        labels: labels.into_iter().collect(),
        support_team: SupportTeam { responders, primary_assignments: assignments },
        conversations,
        notes,
    }
}

use std::sync::Arc;

use serde_json::json;
use time::macros::{date, datetime};

use super::*;
use crate::assistant::model::*;
use crate::assistant::ports::{ChannelStats, ContactFacts, MockLiveData, WhatsappDays};
use crate::channels::{ChannelId, ChannelType};
use crate::common::ports::MockClock;

fn clock() -> Arc<MockClock> {
    let mut c = MockClock::new();
    c.expect_now().return_const(datetime!(2026-11-20 10:00 UTC));
    Arc::new(c)
}

fn assistant(data: MockLiveData, compress: bool) -> Assistant {
    Assistant::new(Arc::new(data), clock(), AssistantSettings { compress_overview: compress })
}

fn channel(id: i64, t: ChannelType) -> ChannelSummary {
    ChannelSummary {
        id: ChannelId(id),
        channel_type: t,
        display_name: format!("Channel {id}"),
        identifier: "+14155550101".into(),
        status: "active".into(),
    }
}

const WS: WorkspaceId = WorkspaceId(7);

#[tokio::test]
async fn channel_series_has_one_zero_filled_point_per_day() -> Result<(), ToolError> {
    let mut data = MockLiveData::new();
    data.expect_channel_stats().returning(|_, _, days, _| {
        assert_eq!(days, 7);
        let c = DeliveryCounts { sent: 10, delivered: 8, read: 4, failed: 1 };
        Ok(ChannelStats::Whatsapp {
            asked: None,
            data: WhatsappDays {
                channels: vec![channel(1, ChannelType::Whatsapp)],
                time_zone: "UTC".into(),
                today: date!(2026 - 11 - 20),
                days: vec![(date!(2026 - 11 - 15), c), (date!(2026 - 11 - 20), c)],
            },
        })
    });
    let v = assistant(data, false).execute(WS, "get_channel_analytics", &json!({})).await?;
    let daily = v["analytics"]["daily"].as_array().cloned().unwrap_or_default();
    assert_eq!(daily.len(), 7);
    assert_eq!(daily[0]["date"], "2026-11-14");
    assert_eq!(daily[0]["sent"], 0);
    assert_eq!(daily[0]["delivery_rate"], json!(null));
    assert_eq!(daily[1]["sent"], 10);
    assert_eq!(daily[6]["date"], "2026-11-20");
    assert_eq!(v["analytics"]["totals"], json!({"sent": 20, "delivered": 16, "read": 8, "failed": 2}));
    assert_eq!(v["analytics"]["delivery_rate"], 0.8);
    assert_eq!(v["analytics"]["read_rate"], 0.5);
    assert_eq!(v["period"], json!({"range": "7d", "from": "2026-11-14", "to": "2026-11-20", "time_zone": "UTC"}));
    assert_eq!(v["channel"], json!(null));
    Ok(())
}

#[tokio::test]
async fn messenger_channel_gets_a_note_and_null_analytics() -> Result<(), ToolError> {
    let mut data = MockLiveData::new();
    data.expect_channel_stats()
        .returning(|_, _, _, _| Ok(ChannelStats::OtherPlatform(channel(5, ChannelType::Messenger))));
    let v = assistant(data, false).execute(WS, "get_channel_analytics", &json!({"channel_id": 5})).await?;
    assert_eq!(v["analytics"], json!(null));
    assert!(v["note"].as_str().unwrap_or_default().contains("/analytics"));
    assert!(v["note"].as_str().unwrap_or_default().contains("/docs/analytics-messenger-instagram"));
    assert_eq!(v["channel"]["channel_type"], "messenger");
    Ok(())
}

#[tokio::test]
async fn unknown_channel_is_an_invalid_argument() {
    let mut data = MockLiveData::new();
    data.expect_channel_stats()
        .returning(|_, id, _, _| Err(ChannelStatsError::UnknownChannel(id.unwrap_or(ChannelId(0)))));
    let e = assistant(data, false).execute(WS, "get_channel_analytics", &json!({"channel_id": 99})).await;
    match e {
        Err(ToolError::Invalid(v)) => assert_eq!(v.0[0].field, "channel_id"),
        other => panic!("expected an invalid argument, got {other:?}"),
    }
}

#[tokio::test]
async fn name_alone_asks_for_an_identifier_without_reading_anything() -> Result<(), ToolError> {
    let data = MockLiveData::new(); // any port call would panic
    let v = assistant(data, false).execute(WS, "get_contact_analytics", &json!({"name": "Maria"})).await?;
    assert_eq!(v["contact"], json!(null));
    assert!(v["note"].as_str().unwrap_or_default().contains("e-mail"));
    Ok(())
}

#[tokio::test]
async fn shared_email_is_not_guessed() -> Result<(), ToolError> {
    let mut data = MockLiveData::new();
    data.expect_find_contacts().returning(|_, _, _| Ok(vec![profile(1), profile(2)]));
    let v = assistant(data, false).execute(WS, "get_contact_analytics", &json!({"email": "a@example.com"})).await?;
    assert_eq!(v["contact"], json!(null));
    assert_eq!(v["lookup"], json!({"by": "email", "value": "a@example.com"}));
    Ok(())
}

#[tokio::test]
async fn phone_is_tried_before_email() -> Result<(), ToolError> {
    let mut data = MockLiveData::new();
    data.expect_find_contacts().returning(|_, key, _| {
        Ok(match key {
            ContactKey::Phone(p) => {
                assert_eq!(p, "+15550000001");
                vec![]
            }
            ContactKey::Email(_) => vec![profile(3)],
        })
    });
    data.expect_contact_facts().returning(|_, id, _, days, _| {
        assert_eq!((id, days), (3, 7));
        Ok(ContactFacts {
            time_zone: "UTC".into(),
            today: date!(2026 - 11 - 20),
            label_exists: true,
            threads: vec![],
            days: vec![ContactDay {
                date: date!(2026 - 11 - 19),
                outbound: 4,
                template_sends: 2,
                billable_templates: 2,
                ..ContactDay::empty(date!(2026 - 11 - 19))
            }],
            responders: vec![],
        })
    });
    let v = assistant(data, false)
        .execute(
            WS,
            "get_contact_analytics",
            &json!({"phone_number": "+1 555 000 0001", "email": "x@y.co", "range": "7d"}),
        )
        .await?;
    assert_eq!(v["lookup"]["by"], "email");
    assert_eq!(v["contact"]["id"], 3);
    assert_eq!(v["time_based"]["daily"].as_array().map(Vec::len), Some(7));
    assert_eq!(v["time_based"]["outbound"], 4);
    // BR: 2 templates at 0.0625.
    assert_eq!(v["cost_based"]["estimated_outbound_cost_usd"], 0.125);
    assert_eq!(v["cost_based"]["template_count"], 2);
    assert_eq!(v["cost_based"]["pricing_country"], "BR");
    assert!(v["time_based"]["daily"][0].get("billable_templates").is_none());
    Ok(())
}

fn profile(id: i64) -> ContactProfile {
    ContactProfile {
        id,
        name: Some("Ana".into()),
        phone: None,
        email: Some("a@example.com".into()),
        country: Some("BR".into()),
        language: None,
        note: None,
        first_contacted_at: None,
        last_contacted_at: None,
    }
}

fn overview(statuses: usize) -> WorkspaceOverview {
    let mut inbox = InboxCounts::default();
    for i in 0..statuses {
        inbox.by_status.insert(format!("status_number_{i:03}"), StatusCounts { total: 3, unread_messages: 0 });
    }
    WorkspaceOverview {
        workspace: OverviewWorkspace { id: 7, name: "Acme".into(), slug: "acme".into(), is_active: true },
        channels: ChannelCounts::default(),
        webhooks: WebhookCounts { total: 2, active: 2, inactive: 0 },
        inbox,
        ai_agents: AgentCounts::default(),
        labels: LabelCounts::default(),
        team_members: TeamCounts { active: 1 },
        generated_at: datetime!(2026-11-20 10:00 UTC),
    }
}

#[tokio::test]
async fn large_overview_is_compressed_by_dropping_zeros_only() -> Result<(), ToolError> {
    let mut data = MockLiveData::new();
    data.expect_overview().returning(|_, _| Ok(Some(overview(60))));
    let v = assistant(data, true).execute(WS, "get_workspace_overview", &json!({})).await?;
    assert_eq!(v["compressed"], true);
    assert_eq!(v["webhooks"], json!({"total": 2, "active": 2}));
    assert_eq!(v["inbox"]["by_status"]["status_number_007"], json!({"total": 3}));
    assert_eq!(v["labels"], json!({}));
    assert_eq!(v["workspace"]["id"], 7);
    assert_eq!(v["generated_at"], "2026-11-20T10:00:00Z");
    Ok(())
}

#[tokio::test]
async fn small_or_uncompressed_overview_is_complete() -> Result<(), ToolError> {
    let mut data = MockLiveData::new();
    data.expect_overview().returning(|_, _| Ok(Some(overview(60))));
    let v = assistant(data, false).execute(WS, "get_workspace_overview", &json!({})).await?;
    assert!(v.get("compressed").is_none());
    assert_eq!(v["webhooks"]["inactive"], 0);

    let mut data = MockLiveData::new();
    data.expect_overview().returning(|_, _| Ok(Some(overview(2))));
    let v = assistant(data, true).execute(WS, "get_workspace_overview", &json!({})).await?;
    assert!(v.get("compressed").is_none());
    assert_eq!(v["labels"], json!({"total": 0}));
    Ok(())
}

#[tokio::test]
async fn docs_search_without_a_registered_search_is_unavailable() {
    let e =
        assistant(MockLiveData::new(), false).execute(WS, "search_product_docs", &json!({"query": "webhooks"})).await;
    assert!(matches!(e, Err(ToolError::Unavailable(_))), "{e:?}");
}

#[tokio::test]
async fn list_channels_echoes_its_filter() -> Result<(), ToolError> {
    let mut data = MockLiveData::new();
    data.expect_channels().returning(|_, t| {
        assert_eq!(t, Some(ChannelType::Instagram));
        Ok(vec![channel(6, ChannelType::Instagram)])
    });
    let v = assistant(data, false).execute(WS, "list_channels", &json!({"channel_type": "instagram"})).await?;
    assert_eq!(v["filter"], "instagram");
    assert_eq!(v["channels"][0]["id"], 6);
    Ok(())
}

fn with_reports(facts: crate::reports::MockConversationFacts) -> Assistant {
    assistant(MockLiveData::new(), false)
        .with_reports(Arc::new(crate::reports::ReportsService::new(Arc::new(facts), clock())))
}

fn caller(actor: crate::access::Actor) -> Caller {
    Caller {
        workspace_id: WS,
        plan: crate::workspace::PlanTier::Advanced,
        actor,
        surface: crate::access::Surface::Assistant,
    }
}

#[tokio::test]
async fn conversation_report_is_the_reports_service_answer() -> Result<(), ToolError> {
    use crate::reports::{ConversationReport, GroupBy, ReportGroup, ReportQuery};
    let mut facts = crate::reports::MockConversationFacts::new();
    facts
        .expect_report()
        .withf(|ws, q| {
            *ws == WS
                && *q
                    == ReportQuery {
                        since: datetime!(2026-11-01 00:00 UTC),
                        until: datetime!(2026-11-20 10:00 UTC),
                        group_by: GroupBy::Team,
                        business_hours: true,
                    }
        })
        .times(1)
        .returning(|_, q| {
            Ok(ConversationReport {
                since: q.since,
                until: q.until,
                business_hours: q.business_hours,
                groups: vec![ReportGroup::empty(None)],
            })
        });
    let admin =
        caller(crate::access::Actor::Member { user_id: crate::users::UserId(1), role: crate::users::Role::Admin });
    let args = json!({"since": "2026-11-01", "group_by": "team", "business_hours": true});
    let v = with_reports(facts).execute_as(&admin, "get_conversation_report", &args).await?;
    assert_eq!(v["since"], "2026-11-01T00:00:00Z");
    assert_eq!(v["business_hours"], true);
    assert_eq!(v["groups"][0]["first_response"], json!({"count": 0, "avg": null, "median": null, "p90": null}));
    Ok(())
}

#[tokio::test]
async fn conversation_report_refuses_a_bad_period_and_callers_the_policy_refuses() {
    // The mock expects no call: nothing is read for a refused call.
    let a = with_reports(crate::reports::MockConversationFacts::new());
    let admin =
        caller(crate::access::Actor::Member { user_id: crate::users::UserId(1), role: crate::users::Role::Admin });
    let e =
        a.execute_as(&admin, "get_conversation_report", &json!({"since": "2026-11-03", "until": "2026-11-02"})).await;
    assert!(matches!(&e, Err(ToolError::Invalid(v)) if v.0[0].field == "since"), "{e:?}");
    let e = a.execute_as(&admin, "get_conversation_report", &json!({"until": "soon"})).await;
    assert!(matches!(&e, Err(ToolError::Invalid(v)) if v.0[0].field == "until"), "{e:?}");
    let agent =
        caller(crate::access::Actor::Member { user_id: crate::users::UserId(2), role: crate::users::Role::Agent });
    let e = a.execute_as(&agent, "get_conversation_report", &json!({"group_by": "inbox"})).await;
    assert!(matches!(e, Err(ToolError::Denied(crate::access::Denied::Forbidden(_)))), "{e:?}");
    let e = assistant(MockLiveData::new(), false).execute_as(&admin, "get_conversation_report", &json!({})).await;
    assert!(matches!(e, Err(ToolError::Unavailable(_))), "{e:?}");
}

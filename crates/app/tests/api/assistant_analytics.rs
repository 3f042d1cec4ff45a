//! `get_channel_analytics` on the demo data against figures computed here from the messages
//! themselves (`docs/assistant.md`, "Rates"), and the daily rollup behind it staying exact.

use serde_json::{json, Value};

use crate::assistant_helpers::{exec, rate, Demo};

/// Per local day of the last `days` days: sent, delivered, read, failed of the outbound messages of
/// `channels` (an SQL expression of channel ids), straight from `messages`.
async fn expected(demo: &Demo, channels: &str, days: i64) -> Value {
    demo.sql_json(&format!(
        "WITH w AS (SELECT time_zone AS tz, (now() AT TIME ZONE time_zone)::date AS today FROM workspaces WHERE id = $1),
              d AS (SELECT generate_series(w.today - {back}, w.today, interval '1 day')::date AS day FROM w),
              m AS (SELECT (m.created_at AT TIME ZONE w.tz)::date AS day, m.status FROM messages m, w
                    WHERE m.workspace_id = $1 AND m.direction = 'outbound' AND m.channel_id IN ({channels}))
         SELECT json_agg(json_build_object(
                    'date', to_char(d.day, 'YYYY-MM-DD'),
                    'sent', (SELECT count(*) FROM m WHERE m.day = d.day AND m.status IN ('sent', 'delivered', 'read')),
                    'delivered', (SELECT count(*) FROM m WHERE m.day = d.day AND m.status IN ('delivered', 'read')),
                    'read', (SELECT count(*) FROM m WHERE m.day = d.day AND m.status = 'read'),
                    'failed', (SELECT count(*) FROM m WHERE m.day = d.day AND m.status = 'failed'))
                ORDER BY d.day)::text AS j
         FROM d",
        back = days - 1
    ))
    .await
}

fn n(v: &Value, k: &str) -> i64 {
    v[k].as_i64().unwrap_or_else(|| panic!("{k} in {v}"))
}

/// Checks a WhatsApp result against the expected days, field by field.
fn check(result: &Value, want: &Value, range: &str) {
    let want = want.as_array().cloned().unwrap_or_default();
    let daily = result["analytics"]["daily"].as_array().cloned().unwrap_or_default();
    assert_eq!(daily.len(), want.len(), "one point per day of {range}");
    let (mut s, mut d, mut r, mut f) = (0, 0, 0, 0);
    for (got, w) in daily.iter().zip(&want) {
        assert_eq!(got["date"], w["date"]);
        for k in ["sent", "delivered", "read", "failed"] {
            assert_eq!(got[k], w[k], "{k} on {}", w["date"]);
        }
        assert_eq!(got["delivery_rate"], rate(n(w, "delivered"), n(w, "sent")));
        assert_eq!(got["read_rate"], rate(n(w, "read"), n(w, "delivered")));
        s += n(w, "sent");
        d += n(w, "delivered");
        r += n(w, "read");
        f += n(w, "failed");
    }
    let a = &result["analytics"];
    assert_eq!(a["totals"], json!({"sent": s, "delivered": d, "read": r, "failed": f}), "{range}");
    assert_eq!(a["delivery_rate"], rate(d, s));
    assert_eq!(a["read_rate"], rate(r, d));
    assert!(s > 0, "the demo has messages in every range");
    assert_eq!(result["period"]["range"], range);
    assert_eq!(result["period"]["from"], want[0]["date"]);
    assert_eq!(result["period"]["to"], want[want.len() - 1]["date"]);
    assert!(a["definitions"]["delivery_rate"].as_str().is_some_and(|t| t.contains("delivered / sent")));
}

const WHATSAPP: &str = "SELECT id FROM channels WHERE workspace_id = $1 AND channel_type = 'whatsapp'";

#[tokio::test]
async fn all_whatsapp_channels_over_every_range_match_the_messages() {
    let demo = Demo::new().await;
    let default = demo.tool("get_channel_analytics", json!({})).await;
    check(&default, &expected(&demo, WHATSAPP, 7).await, "7d");
    assert_eq!(default["channel"], Value::Null);
    assert_eq!(default["channels"].as_array().map(Vec::len), Some(4), "every WhatsApp channel, connected or not");
    assert_eq!(default["period"]["time_zone"], "UTC");
    for (range, days) in [("14d", 14), ("30d", 30), ("60d", 60), ("90d", 90)] {
        let r = demo.tool("get_channel_analytics", json!({"range": range})).await;
        check(&r, &expected(&demo, WHATSAPP, days).await, range);
    }
}

#[tokio::test]
async fn one_whatsapp_channel_matches_its_messages() {
    let demo = Demo::new().await;
    let id = demo.sql_json(&format!("SELECT min(id)::text AS j FROM ({WHATSAPP}) c")).await;
    let r = demo.tool("get_channel_analytics", json!({"channel_id": id, "range": "30d"})).await;
    check(&r, &expected(&demo, &id.to_string(), 30).await, "30d");
    assert_eq!(r["channel"]["id"], id);
    assert_eq!(r["channel"]["channel_type"], "whatsapp");
    assert_eq!(r["channels"], json!([r["channel"]]));
}

#[tokio::test]
async fn messenger_and_instagram_channels_get_a_note_pointing_to_analytics() {
    let demo = Demo::new().await;
    for t in ["messenger", "instagram"] {
        let id = demo
            .sql_json(&format!("SELECT id::text AS j FROM channels WHERE workspace_id = $1 AND channel_type = '{t}'"))
            .await;
        let r = demo.tool("get_channel_analytics", json!({"channel_id": id, "range": "90d"})).await;
        assert!(r.get("analytics").is_some_and(Value::is_null), "{r}");
        let note = r["note"].as_str().unwrap_or_default();
        assert!(note.contains("Analytics page") && note.contains("/analytics"), "{note}");
        assert_eq!(r["channel"]["channel_type"], t);
    }
}

#[tokio::test]
async fn daily_rollup_follows_status_changes_inserts_and_deletes() {
    let demo = Demo::new().await;
    let ws = demo.ws;
    // Status callbacks: queued → sent → delivered → read, and failures.
    exec(
        &demo.app,
        "UPDATE messages SET status = 'sent' WHERE workspace_id = $1 AND status = 'queued' AND id % 2 = 0",
        ws,
    )
    .await;
    exec(
        &demo.app,
        "UPDATE messages SET status = 'read' WHERE workspace_id = $1 AND status = 'delivered' AND id % 3 = 0",
        ws,
    )
    .await;
    exec(
        &demo.app,
        "UPDATE messages SET status = 'failed' WHERE workspace_id = $1 AND status = 'sent' AND id % 5 = 0",
        ws,
    )
    .await;
    // A message moved to another day and one touched without any change.
    exec(
        &demo.app,
        "UPDATE messages SET created_at = created_at - interval '2 days' WHERE workspace_id = $1 AND id % 7 = 0",
        ws,
    )
    .await;
    exec(&demo.app, "UPDATE messages SET updated_at = now() WHERE workspace_id = $1 AND id % 11 = 0", ws).await;
    // New messages today and deleted ones.
    exec(
        &demo.app,
        "INSERT INTO messages (workspace_id, thread_id, channel_id, direction, sender_kind, content, status)
         SELECT workspace_id, id, channel_id, 'outbound', 'human', 'hello', (ARRAY['sent','delivered','read','failed'])[1 + id % 4]
         FROM threads WHERE workspace_id = $1 ORDER BY id LIMIT 40",
        ws,
    )
    .await;
    exec(&demo.app, "DELETE FROM messages WHERE workspace_id = $1 AND id % 13 = 0", ws).await;
    let r = demo.tool("get_channel_analytics", json!({"range": "90d"})).await;
    check(&r, &expected(&demo, WHATSAPP, 90).await, "90d");
    // And the rollup as a whole equals a rebuild from the messages.
    let drift = demo
        .sql_json(
            "SELECT count(*)::text AS j FROM (
                 SELECT channel_id, day, sum(sent) s, sum(delivered) d, sum(read) r, sum(failed) f
                 FROM message_daily_stats WHERE workspace_id = $1 GROUP BY 1, 2 HAVING sum(sent) + sum(delivered) + sum(read) + sum(failed) > 0
                 EXCEPT
                 SELECT channel_id, (created_at AT TIME ZONE 'UTC')::date,
                        count(*) FILTER (WHERE status IN ('sent','delivered','read')), count(*) FILTER (WHERE status IN ('delivered','read')),
                        count(*) FILTER (WHERE status = 'read'), count(*) FILTER (WHERE status = 'failed')
                 FROM messages WHERE workspace_id = $1 AND direction = 'outbound' AND status <> 'queued' GROUP BY 1, 2) x",
        )
        .await;
    assert_eq!(drift, 0);
}

#[tokio::test]
async fn days_are_calendar_days_of_the_workspace_time_zone() {
    let demo = Demo::new().await;
    exec(&demo.app, "UPDATE workspaces SET time_zone = 'America/Sao_Paulo' WHERE id = $1", demo.ws).await;
    let r = demo.tool("get_channel_analytics", json!({"range": "14d"})).await;
    assert_eq!(r["period"]["time_zone"], "America/Sao_Paulo");
    check(&r, &expected(&demo, WHATSAPP, 14).await, "14d");
    // A zone PostgreSQL does not know never reaches the rollup.
    let mut conn = demo.app.db.conn().await.expect("conn");
    let bad = diesel_async::RunQueryDsl::execute(
        diesel::sql_query("UPDATE workspaces SET time_zone = 'Mars/Olympus' WHERE id = $1")
            .bind::<diesel::sql_types::BigInt, _>(demo.ws),
        &mut conn,
    )
    .await;
    assert!(bad.is_err(), "unknown time zone accepted");
}

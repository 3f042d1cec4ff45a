//! `get_contact_analytics` on the demo data: the seven sections (`docs/assistant.md`,
//! "`get_contact_analytics`") against figures computed here, lookups, the label filter, and the
//! rules that never guess and never quote.

use serde_json::{json, Value};

use crate::assistant_helpers::{Demo, SEED_CONTENTS};

/// The contact with the most messages in the last 30 days whose threads carry labels and have
/// several assignee kinds, so every section has data.
async fn busy_contact(demo: &Demo) -> Value {
    demo.sql_json(
        "SELECT row_to_json(c)::text AS j FROM (
             SELECT ct.id, ct.phone, ct.email, ct.country FROM contacts ct
             JOIN threads t ON t.workspace_id = ct.workspace_id AND t.contact_id = ct.id
             JOIN messages m ON m.workspace_id = t.workspace_id AND m.thread_id = t.id
             WHERE ct.workspace_id = $1 AND m.created_at > now() - interval '29 days'
               AND EXISTS (SELECT 1 FROM thread_labels tl JOIN threads t2 ON t2.id = tl.thread_id
                           WHERE t2.contact_id = ct.id)
               AND EXISTS (SELECT 1 FROM threads t3 JOIN messages m3 ON m3.thread_id = t3.id
                           WHERE t3.contact_id = ct.id AND m3.sender_kind = 'human' AND m3.created_at > now() - interval '29 days')
             GROUP BY ct.id ORDER BY count(*) DESC, ct.id LIMIT 1) c",
    )
    .await
}

/// Formats `+15550000123` the way people type it: `0015 550 000-0123`.
fn typed(phone: &str) -> String {
    let d = phone.trim_start_matches('+');
    format!("00{} {} {}-{}", &d[..2], &d[2..5], &d[5..8], &d[8..])
}

#[tokio::test]
async fn every_section_matches_independent_figures() {
    let demo = Demo::new().await;
    let c = busy_contact(&demo).await;
    let id = c["id"].as_i64().expect("a busy contact");
    let phone = c["phone"].as_str().expect("phone").to_owned();
    let r = demo.tool("get_contact_analytics", json!({"phone_number": typed(&phone), "name": "Whoever"})).await;
    let d = &demo;
    let q = |sql: String| async move { d.sql_json(&sql).await };

    assert_eq!(r["lookup"], json!({"by": "phone_number", "value": phone}), "normalised to E.164");
    assert_eq!(r["period"]["range"], "30d");

    // contact
    let profile = q(format!(
        "SELECT json_build_object('id', id, 'name', name, 'phone', phone, 'email', email, 'country', country,
                'language', language, 'note', note,
                'first_contacted_at', to_char(first_contacted_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS'),
                'last_contacted_at', to_char(last_contacted_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS'))::text AS j
         FROM contacts WHERE workspace_id = $1 AND id = {id}"
    ))
    .await;
    for k in ["id", "name", "phone", "email", "country", "language", "note"] {
        assert_eq!(r["contact"][k], profile[k], "contact.{k}");
    }
    for k in ["first_contacted_at", "last_contacted_at"] {
        let got = r["contact"][k].as_str().unwrap_or_default();
        assert!(got.starts_with(profile[k].as_str().unwrap_or("?")), "contact.{k}: {got} vs {}", profile[k]);
    }

    // summary
    let summary = q(format!(
        "SELECT json_build_object(
             'threads_total', count(*),
             'open', count(*) FILTER (WHERE status = 'open'),
             'resolved', count(*) FILTER (WHERE status = 'resolved'),
             'by_status', (SELECT json_object_agg(status, n) FROM (SELECT status, count(*) n FROM threads
                           WHERE workspace_id = $1 AND contact_id = {id} GROUP BY 1) s),
             'unread_messages', sum(unread_count),
             'channels_used', (SELECT json_agg(json_build_object('id', ch.id, 'channel_type', ch.channel_type,
                                                                 'display_name', ch.display_name) ORDER BY ch.id)
                               FROM channels ch WHERE ch.workspace_id = $1 AND ch.id IN
                                   (SELECT channel_id FROM threads WHERE workspace_id = $1 AND contact_id = {id})))::text AS j
         FROM threads WHERE workspace_id = $1 AND contact_id = {id}"
    ))
    .await;
    assert_eq!(r["summary"], summary);

    // time_based, per UTC day of the last 30 days
    let days = q(format!(
        "WITH d AS (SELECT generate_series((now() AT TIME ZONE 'UTC')::date - 29, (now() AT TIME ZONE 'UTC')::date, interval '1 day')::date AS day),
              m AS (SELECT (m.created_at AT TIME ZONE 'UTC')::date AS day, m.* FROM messages m
                    JOIN threads t ON t.workspace_id = m.workspace_id AND t.id = m.thread_id
                    WHERE m.workspace_id = $1 AND t.contact_id = {id})
         SELECT json_agg(json_build_object('date', to_char(d.day, 'YYYY-MM-DD'),
             'inbound', (SELECT count(*) FROM m WHERE m.day = d.day AND direction = 'inbound'),
             'outbound', (SELECT count(*) FROM m WHERE m.day = d.day AND direction = 'outbound'),
             'outbound_human', (SELECT count(*) FROM m WHERE m.day = d.day AND sender_kind = 'human'),
             'outbound_ai', (SELECT count(*) FROM m WHERE m.day = d.day AND sender_kind = 'ai'),
             'template_sends', (SELECT count(*) FROM m WHERE m.day = d.day AND sender_kind = 'template'),
             'delivered', (SELECT count(*) FROM m WHERE m.day = d.day AND direction = 'outbound' AND status IN ('delivered', 'read')),
             'read', (SELECT count(*) FROM m WHERE m.day = d.day AND direction = 'outbound' AND status = 'read'),
             'failed', (SELECT count(*) FROM m WHERE m.day = d.day AND direction = 'outbound' AND status = 'failed'))
             ORDER BY d.day)::text AS j FROM d"
    ))
    .await;
    let tb = &r["time_based"];
    assert_eq!(tb["daily"], days, "daily series");
    for k in ["inbound", "outbound", "outbound_human", "outbound_ai", "template_sends", "delivered", "read", "failed"] {
        let total: i64 = days.as_array().map(|a| a.iter().map(|d| d[k].as_i64().unwrap_or(0)).sum()).unwrap_or(0);
        assert_eq!(tb[k], total, "time_based.{k}");
    }
    assert!(tb["outbound"].as_i64() > Some(0) && tb["inbound"].as_i64() > Some(0));

    // cost_based
    let templates = q(format!(
        "SELECT count(*)::text AS j FROM messages m JOIN threads t ON t.id = m.thread_id
         JOIN channels ch ON ch.id = m.channel_id
         WHERE m.workspace_id = $1 AND t.contact_id = {id} AND m.sender_kind = 'template'
           AND m.status IN ('sent', 'delivered', 'read') AND ch.channel_type = 'whatsapp'
           AND m.created_at >= ((now() AT TIME ZONE 'UTC')::date - 29)::timestamp AT TIME ZONE 'UTC'"
    ))
    .await;
    let (country, per) = domain::assistant::pricing::template_rate(c["country"].as_str());
    let cost = &r["cost_based"];
    assert_eq!(cost["template_count"], templates);
    assert_eq!(cost["pricing_country"], country);
    assert_eq!(cost["rate_per_template_usd"], json!(per));
    assert_eq!(
        cost["estimated_outbound_cost_usd"],
        json!(domain::assistant::pricing::estimate(templates.as_i64().unwrap_or(0), per))
    );
    assert!(cost["disclaimer"].as_str().is_some_and(|d| d.contains("Estimate")));

    // labels
    let labels = q(format!(
        "SELECT coalesce(json_agg(DISTINCT l.name ORDER BY l.name), '[]')::text AS j FROM thread_labels tl
         JOIN labels l ON l.id = tl.label_id JOIN threads t ON t.id = tl.thread_id
         WHERE tl.workspace_id = $1 AND t.contact_id = {id}"
    ))
    .await;
    assert_eq!(r["labels"], labels);
    assert!(labels.as_array().is_some_and(|l| !l.is_empty()));

    // support_team
    let responders = q(format!(
        "SELECT coalesce(json_agg(json_build_object('user_id', user_id, 'name', name, 'outbound_messages', n)
                                  ORDER BY n DESC, name), '[]')::text AS j
         FROM (SELECT u.id AS user_id, u.name, count(*) AS n FROM messages m JOIN threads t ON t.id = m.thread_id
               JOIN users u ON u.id = m.author_user_id
               WHERE m.workspace_id = $1 AND t.contact_id = {id} AND m.sender_kind = 'human'
                 AND m.created_at >= ((now() AT TIME ZONE 'UTC')::date - 29)::timestamp AT TIME ZONE 'UTC' GROUP BY 1, 2) s"
    ))
    .await;
    assert_eq!(r["support_team"]["responders"], responders);
    let assignments = q(format!(
        "SELECT coalesce(json_object_agg(assignee_type || ':' || aid, n), '{{}}')::text AS j FROM (
             SELECT assignee_type, coalesce(assignee_user_id, assignee_team_id, assignee_ai_agent_id) AS aid, count(*) n
             FROM threads WHERE workspace_id = $1 AND contact_id = {id} AND assignee_type IS NOT NULL GROUP BY 1, 2) s"
    ))
    .await;
    let got = r["support_team"]["primary_assignments"].as_array().cloned().unwrap_or_default();
    assert_eq!(got.len(), assignments.as_object().map_or(0, |m| m.len()));
    for a in &got {
        let key = format!("{}:{}", a["type"].as_str().unwrap_or_default(), a["id"]);
        assert_eq!(a["threads"], assignments[&key], "{key}");
        assert!(a["name"].is_string(), "assignee names are resolved");
    }

    // conversations
    let threads = q(format!(
        "SELECT json_object_agg(t.id, json_build_object(
             'status', t.status, 'unread_messages', t.unread_count, 'handover_status', t.handover_status,
             'channel', t.channel_id, 'assignee_type', t.assignee_type,
             'labels', coalesce((SELECT json_agg(l.name ORDER BY l.name) FROM thread_labels tl JOIN labels l ON l.id = tl.label_id
                                 WHERE tl.thread_id = t.id), '[]')))::text AS j
         FROM threads t WHERE t.workspace_id = $1 AND t.contact_id = {id}"
    ))
    .await;
    let conversations = r["conversations"].as_array().cloned().unwrap_or_default();
    assert_eq!(conversations.len(), threads.as_object().map_or(0, |m| m.len()));
    for cv in &conversations {
        let t = &threads[cv["thread_id"].to_string()];
        assert_eq!(cv["status"], t["status"]);
        assert_eq!(cv["unread_messages"], t["unread_messages"]);
        assert_eq!(cv["handover_status"], t["handover_status"]);
        assert_eq!(cv["channel"]["id"], t["channel"]);
        assert_eq!(cv["labels"], t["labels"]);
        match t["assignee_type"].as_str() {
            None => assert_eq!(cv["assignee"], Value::Null),
            Some(kind) => assert_eq!(cv["assignee"]["type"], kind),
        }
    }

    // Aggregates and metadata only: message content is never read.
    let text = r.to_string();
    for content in SEED_CONTENTS {
        assert!(!text.contains(content), "message content leaked: {content}");
    }
    assert!(!text.contains("Whoever"), "the name is context only");
}

#[tokio::test]
async fn email_lookup_range_and_label_filter() {
    let demo = Demo::new().await;
    let c = demo
        .sql_json(
            "SELECT row_to_json(x)::text AS j FROM (
                 SELECT ct.id, ct.email, l.name AS label FROM contacts ct
                 JOIN threads t ON t.contact_id = ct.id JOIN thread_labels tl ON tl.thread_id = t.id
                 JOIN labels l ON l.id = tl.label_id
                 WHERE ct.workspace_id = $1 AND ct.email IS NOT NULL
                   AND (SELECT count(*) FROM threads t2 WHERE t2.contact_id = ct.id) >= 2
                 ORDER BY ct.id LIMIT 1) x",
        )
        .await;
    let (id, email, label) =
        (c["id"].clone(), c["email"].as_str().expect("email"), c["label"].as_str().expect("label"));
    let r = demo
        .tool(
            "get_contact_analytics",
            json!({"email": email.to_uppercase(), "range": "90d", "label": label.to_uppercase()}),
        )
        .await;
    assert_eq!(r["contact"]["id"], id);
    assert_eq!(r["lookup"]["by"], "email");
    assert_eq!(r["time_based"]["daily"].as_array().map(Vec::len), Some(90));
    let labelled = demo
        .sql_json(&format!(
            "SELECT json_agg(t.id ORDER BY t.id)::text AS j FROM threads t WHERE t.workspace_id = $1 AND t.contact_id = {id}
             AND EXISTS (SELECT 1 FROM thread_labels tl JOIN labels l ON l.id = tl.label_id WHERE tl.thread_id = t.id AND l.name = '{label}')"
        ))
        .await;
    let mut got: Vec<i64> = r["conversations"]
        .as_array()
        .map(|a| a.iter().filter_map(|c| c["thread_id"].as_i64()).collect())
        .unwrap_or_default();
    got.sort_unstable();
    assert_eq!(json!(got), labelled);
    assert_eq!(r["summary"]["threads_total"], json!(got.len()));
    assert!(r["conversations"]
        .as_array()
        .is_some_and(|a| a.iter().all(|c| c["labels"].as_array().is_some_and(|l| l.contains(&json!(label))))));

    let none = demo.tool("get_contact_analytics", json!({"email": email, "label": "no-such-label"})).await;
    assert_eq!(none["summary"]["threads_total"], 0);
    assert!(none["notes"].to_string().contains("no-such-label"));
}

#[tokio::test]
async fn without_phone_or_email_the_assistant_is_told_to_ask() {
    let demo = Demo::new().await;
    for args in [json!({}), json!({"name": "Ana Almeida"}), json!({"name": "Ana", "phone_number": "", "email": null})] {
        let r = demo.tool("get_contact_analytics", args).await;
        assert_eq!(r["contact"], Value::Null, "{r}");
        let note = r["note"].as_str().unwrap_or_default();
        assert!(note.contains("Ask") && note.contains("e-mail") && note.contains("phone"), "{note}");
        assert!(r.get("summary").is_none() && r.get("conversations").is_none());
    }
}

#[tokio::test]
async fn unknown_numbers_and_shared_emails_find_no_one() {
    let demo = Demo::new().await;
    let r = demo.tool("get_contact_analytics", json!({"phone_number": "+999 1234 5678"})).await;
    assert_eq!(r["contact"], Value::Null);
    assert_eq!(r["lookup"], json!({"by": "phone_number", "value": "+99912345678"}));
    crate::assistant_helpers::exec(
        &demo.app,
        "UPDATE contacts SET email = 'family@example.com' WHERE workspace_id = $1 AND id IN
             (SELECT id FROM contacts WHERE workspace_id = $1 ORDER BY id LIMIT 2)",
        demo.ws,
    )
    .await;
    let r = demo.tool("get_contact_analytics", json!({"email": "family@example.com"})).await;
    assert_eq!(r["contact"], Value::Null);
    assert!(r["note"].as_str().unwrap_or_default().contains("Several contacts"));
}

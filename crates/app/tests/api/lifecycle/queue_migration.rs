//! The manual teams' queue migration on a database filled before it: threads a manual team held
//! from routing join its queue from their creation (a snoozed one too, counted once it reopens);
//! a thread given to the team by hand, a closed one and a member's stay as they were.

use diesel::sql_types::{BigInt, Bool, Text};
use diesel::QueryableByName;
use diesel_async::RunQueryDsl;

const VERSION: &str = "20261201000101";

#[derive(QueryableByName, Debug, PartialEq)]
struct Queued {
    #[diesel(sql_type = Text)]
    tag: String,
    #[diesel(sql_type = Bool)]
    waits_since_created: bool,
    #[diesel(sql_type = Bool)]
    waits: bool,
}

#[tokio::test]
async fn threads_a_manual_team_held_join_its_queue_and_nothing_else_moves() {
    let (database, _db, mut conn) = crate::helpers::filled_before(
        VERSION,
        &[
            "INSERT INTO workspaces (name, slug, plan) VALUES ('Old', 'old', 'advanced')",
            "INSERT INTO users (email, name, password_hash) VALUES ('old@test.wms', 'Old', 'x')",
            "INSERT INTO workspace_members (workspace_id, user_id, role) SELECT w.id, u.id, 'admin' FROM workspaces w, users u",
            "INSERT INTO teams (workspace_id, name, assignment_mode) SELECT id, 'Manual', 'manual' FROM workspaces",
            "INSERT INTO teams (workspace_id, name, assignment_mode) SELECT id, 'Auto', 'round_robin' FROM workspaces",
            "INSERT INTO channels (workspace_id, channel_type, display_name, identifier, status)
             SELECT id, 'whatsapp', 'Old', '+14155550100', 'active' FROM workspaces",
            "INSERT INTO contacts (workspace_id, phone) SELECT id, '+14155550199' FROM workspaces",
        ],
    )
    .await;
    // (tag, team, assignee, status, reason), in id order; each older than the next.
    let rows = [
        ("routed", "Manual", "team", "open", None),
        ("routed-pending", "Manual", "team", "pending", None),
        ("by-hand", "Manual", "team", "open", Some("manual")),
        ("resolved", "Manual", "team", "resolved", None),
        ("snoozed", "Manual", "team", "snoozed", None),
        ("member", "Manual", "user", "open", Some("manual")),
        ("auto-team", "Auto", "team", "open", None),
    ];
    for (tag, team, assignee, status, reason) in rows {
        diesel::sql_query(
            "INSERT INTO threads (workspace_id, contact_id, channel_id, status, team_id, assignee_type,
                                  assignee_team_id, assignee_user_id, assignment_reason, created_at)
             SELECT w.id, c.id, ch.id, $2, t.id, $3,
                    CASE WHEN $3 = 'team' THEN t.id END, CASE WHEN $3 = 'user' THEN u.id END, $4,
                    now() - interval '1 hour' - (SELECT count(*) FROM threads) * interval '1 minute'
             FROM workspaces w, contacts c, channels ch, users u, teams t WHERE t.name = $1",
        )
        .bind::<Text, _>(team)
        .bind::<Text, _>(status)
        .bind::<Text, _>(assignee)
        .bind::<diesel::sql_types::Nullable<Text>, _>(reason)
        .execute(&mut conn)
        .await
        .unwrap_or_else(|e| panic!("{e}: {tag}"));
    }
    adapters_postgres::migrate::run_pending(&database.url).await.expect("migrate");

    let got: Vec<Queued> = diesel::sql_query(
        "SELECT (ARRAY['routed', 'routed-pending', 'by-hand', 'resolved', 'snoozed', 'member', 'auto-team'])[row_number() OVER (ORDER BY id)] AS tag,
                coalesce(waiting_since = created_at, false) AS waits_since_created,
                waiting_since IS NOT NULL AS waits
         FROM threads ORDER BY id",
    )
    .load(&mut conn)
    .await
    .expect("threads");
    let waiting: Vec<(&str, bool)> = got.iter().map(|q| (q.tag.as_str(), q.waits)).collect();
    assert_eq!(
        waiting,
        [
            ("routed", true),
            ("routed-pending", true),
            ("by-hand", false),
            ("resolved", false),
            ("snoozed", true),
            ("member", false),
            ("auto-team", false)
        ]
    );
    assert!(got.iter().filter(|q| q.waits).all(|q| q.waits_since_created), "{got:?}");
    let count: i64 = {
        #[derive(QueryableByName)]
        struct N {
            #[diesel(sql_type = BigInt)]
            n: i64,
        }
        diesel::sql_query("SELECT count(*) AS n FROM threads").get_result::<N>(&mut conn).await.expect("count").n
    };
    assert_eq!(count, 7, "nothing lost");
}

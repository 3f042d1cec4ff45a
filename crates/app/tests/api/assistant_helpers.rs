//! Helpers for the assistant's tests: a seeded demo workspace with its admin signed in, tool calls
//! through the execute endpoint, and independent SQL that returns JSON for comparison.

#![allow(dead_code)]

use diesel::sql_types::{BigInt, Text};
use diesel::QueryableByName;
use diesel_async::RunQueryDsl;
use serde_json::{json, Value};

use crate::credentials::token_for;
use crate::helpers::TestApp;

/// A running server with a seeded demo workspace and its admin's login token.
pub struct Demo {
    /// The server.
    pub app: TestApp,
    /// The demo workspace.
    pub ws: i64,
    /// The admin's user token.
    pub token: String,
}

/// The execute endpoint of workspace `ws`.
pub fn execute_path(ws: i64) -> String {
    format!("/workspaces/{ws}/co-admin/tools/execute")
}

/// Seeds a new demo workspace on `app` and signs its admin in.
pub async fn seed_demo_workspace(app: &TestApp) -> (i64, String) {
    let cipher = app::secrets::cipher(&app.settings, &app.db, false).await.expect("cipher");
    let creds = app::commands::seed_demo(&app.db, cipher.as_ref(), None).await.expect("seed");
    let (email, password) = (creds.email.expect("email"), creds.password.expect("password"));
    let token = token_for(app, &email, &password, Some(creds.workspace_id)).await;
    (creds.workspace_id, token)
}

impl Demo {
    /// A server with default settings and a demo workspace.
    pub async fn new() -> Demo {
        Self::with(TestApp::spawn().await).await
    }

    /// A demo workspace on `app`.
    pub async fn with(app: TestApp) -> Demo {
        let (ws, token) = seed_demo_workspace(&app).await;
        Demo { app, ws, token }
    }

    /// `POST …/tools/execute` with `body`.
    pub async fn execute_raw(&self, body: &Value) -> reqwest::Response {
        self.app
            .client
            .post(self.app.url(&execute_path(self.ws)))
            .bearer_auth(&self.token)
            .json(body)
            .send()
            .await
            .expect("request")
    }

    /// Runs `tool` and returns its result, after checking the envelope.
    pub async fn tool(&self, tool: &str, arguments: Value) -> Value {
        let res = self.execute_raw(&json!({"tool": tool, "arguments": arguments})).await;
        let status = res.status().as_u16();
        let body: Value = res.json().await.expect("json");
        assert_eq!(status, 200, "{tool} {body}");
        assert_eq!(body["tool"], tool);
        body["result"].clone()
    }

    /// The JSON that `sql` (one row, one text column `j`, `$1` = the workspace) returns.
    pub async fn sql_json(&self, sql: &str) -> Value {
        sql_json(&self.app, sql, self.ws).await
    }
}

#[derive(QueryableByName)]
struct J {
    #[diesel(sql_type = Text)]
    j: String,
}

/// The JSON that `sql` (one row, one text column `j`, `$1` = `ws`) returns.
pub async fn sql_json(app: &TestApp, sql: &str, ws: i64) -> Value {
    let mut conn = app.db.conn().await.expect("conn");
    let row: J = diesel::sql_query(sql)
        .bind::<BigInt, _>(ws)
        .get_result(&mut conn)
        .await
        .unwrap_or_else(|e| panic!("{e}: {sql}"));
    serde_json::from_str(&row.j).expect("json from sql")
}

/// Runs a statement with `$1` = `ws`.
pub async fn exec(app: &TestApp, sql: &str, ws: i64) {
    let mut conn = app.db.conn().await.expect("conn");
    diesel::sql_query(sql).bind::<BigInt, _>(ws).execute(&mut conn).await.unwrap_or_else(|e| panic!("{e}: {sql}"));
}

/// Rounds like the tools do: 4 decimal places, null when the denominator is 0.
pub fn rate(num: i64, den: i64) -> Value {
    if den == 0 {
        Value::Null
    } else {
        json!(((num as f64 / den as f64) * 10_000.0).round() / 10_000.0)
    }
}

/// Every message text the demo seed writes: none may ever appear in a tool result.
pub const SEED_CONTENTS: &[&str] = &[
    "Hi, where is my order?",
    "Thanks, that solved it!",
    "Can I change my delivery address?",
    "Your order has shipped",
    "We are sorry for the delay.",
    "Do you ship to Portugal?",
    "Here is your invoice",
    "The app crashes when I pay.",
    "Your appointment is confirmed",
    "Could you send a photo of the item?",
];

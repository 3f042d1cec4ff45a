//! What the signed-in pages show: keys once, fields named, plan notices, the workspace picker, no
//! other hosts, the REST reference and the analytics exports.

use super::*;

#[tokio::test]
async fn a_created_key_is_shown_once_then_masked_and_works_until_revoked() {
    let app = TestApp::spawn().await;
    let ws = app.create_workspace(PlanTier::Advanced).await;
    let b = sign_in(&app, &ws).await;
    let created =
        b.post(&app, "/settings/workspace/api-keys", &[("name", "crm-sync"), ("expires", "2099-12-31")], true).await;
    assert_eq!(created.status(), StatusCode::CREATED);
    assert_eq!(created.headers()["cache-control"], "no-store");
    let html = created.text().await.expect("html");
    let at = html.find("id=\"new-key\"").expect("new key field");
    let key = html[at..].split("value=\"").nth(1).and_then(|v| v.split('"').next()).expect("key").to_owned();
    assert!(key.starts_with("wmsk_"));
    assert!(html.contains("cannot show it again"));
    assert!(html.contains("2099-12-31 23:59 UTC"));

    let listed = b.get(&app, "/settings/workspace/api-keys").await.text().await.expect("html");
    assert!(!listed.contains(&key));
    assert!(listed.contains(&format!("wmsk_…{}", &key[key.len() - 4..])));
    assert_eq!(app.get_json("/v1/channels", &key).await.0, 200);

    let id = listed.split("data-key-id=\"").nth(1).and_then(|v| v.split('"').next()).expect("id").to_owned();
    let revoked = b.post(&app, &format!("/settings/workspace/api-keys/{id}/revoke"), &[], true).await;
    assert_eq!(revoked.status(), StatusCode::SEE_OTHER);
    assert!(
        set_cookie(&revoked, "wms_flash").is_some_and(|(_, h)| h.contains("revoked")),
        "a message for the next page"
    );
    let res = app.authed(reqwest::Method::GET, "/v1/channels", &key).send().await.expect("request");
    crate::helpers::problem(res, 401, "token_revoked").await;
    let after = b.get(&app, "/settings/workspace/api-keys").await.text().await.expect("html");
    assert!(after.contains("badge revoked"));

    assert_eq!(b.post(&app, &format!("/settings/workspace/api-keys/{id}/delete"), &[], true).await.status(), 303);
    assert_eq!(key_count(&app, &b, ws.id).await, 0);
}

#[tokio::test]
async fn invalid_input_is_named_beside_the_field() {
    let app = TestApp::spawn().await;
    let ws = app.create_workspace(PlanTier::Advanced).await;
    let b = sign_in(&app, &ws).await;
    let res = b.post(&app, "/settings/workspace/api-keys", &[("name", " "), ("expires", "2001-01-01")], true).await;
    assert_eq!(res.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let html = res.text().await.expect("html");
    assert!(html.contains("id=\"key-name-error\""), "{html}");
    assert!(html.contains("id=\"key-expires-error\""));
    assert!(html.contains("aria-invalid=\"true\""));
}

#[tokio::test]
async fn below_the_needed_plan_the_pages_name_the_plan_instead_of_a_form() {
    let app = TestApp::spawn().await;
    let ws = app.create_workspace(PlanTier::Starter).await;
    let b = sign_in(&app, &ws).await;
    let keys = b.get(&app, "/settings/workspace/api-keys").await.text().await.expect("html");
    assert!(keys.contains("API keys needs the") && keys.contains("<strong>advanced</strong>"));
    assert!(!keys.contains("Create key"));
    let hooks = b.get(&app, "/settings/integrations/webhooks").await.text().await.expect("html");
    assert!(hooks.contains("Webhooks needs the") && hooks.contains("<strong>growth</strong>"));
    assert!(!hooks.contains("Add destination"));
    let forced = b.post(&app, "/settings/workspace/api-keys", &[("name", "x")], true).await;
    assert_eq!(forced.status(), StatusCode::FORBIDDEN);
    assert!(forced.text().await.expect("html").contains("API keys needs the"));
}

#[tokio::test]
async fn a_member_of_several_workspaces_picks_one() {
    use diesel_async::RunQueryDsl;
    let app = TestApp::spawn().await;
    let first = app.create_workspace(PlanTier::Advanced).await;
    let second = app.create_workspace(PlanTier::Growth).await;
    let mut conn = app.db.conn().await.expect("conn");
    diesel::sql_query("INSERT INTO workspace_members (workspace_id, user_id, role) VALUES ($1, $2, 'admin')")
        .bind::<diesel::sql_types::BigInt, _>(second.id)
        .bind::<diesel::sql_types::BigInt, _>(first.admin_id)
        .execute(&mut conn)
        .await
        .expect("membership");
    let res = submit_login(&app, &first.admin_email, &first.admin_password).await;
    assert_eq!(res.headers()[LOCATION], "/login/workspace");
    let (cookie, _) = set_cookie(&res, "wms_session").expect("cookie");
    let picker = app.client.get(app.url("/login/workspace")).header(COOKIE, &cookie).send().await.expect("page");
    let html = picker.text().await.expect("html");
    assert!(html.contains(&format!("value=\"{}\"", second.id)));
    // No workspace page before the choice.
    let early = app.client.get(app.url("/analytics")).header(COOKIE, &cookie).send().await.expect("page");
    assert_eq!(early.headers()[LOCATION], "/login/workspace");
    let b = Browser { cookie, csrf: csrf_of(&html) };
    let chosen = b.post(&app, "/login/workspace", &[("workspace_id", &second.id.to_string())], true).await;
    assert_eq!(chosen.status(), StatusCode::SEE_OTHER);
    let page = b.get(&app, "/settings/integrations/webhooks").await.text().await.expect("html");
    assert!(page.contains(&format!("Workspace {}", &second.admin_email[6..18])), "second workspace's name");
}

#[tokio::test]
async fn the_workspace_chooser_keeps_where_the_sign_in_was_going() {
    use diesel_async::RunQueryDsl;
    let app = TestApp::spawn().await;
    let first = app.create_workspace(PlanTier::Advanced).await;
    let second = app.create_workspace(PlanTier::Growth).await;
    let mut conn = app.db.conn().await.expect("conn");
    diesel::sql_query("INSERT INTO workspace_members (workspace_id, user_id, role) VALUES ($1, $2, 'admin')")
        .bind::<diesel::sql_types::BigInt, _>(second.id)
        .bind::<diesel::sql_types::BigInt, _>(first.admin_id)
        .execute(&mut conn)
        .await
        .expect("membership");
    // The OAuth consent page sends the browser to sign in with where to come back.
    let next = "/oauth/authorize?client_id=abc&redirect_uri=http%3A%2F%2F127.0.0.1%3A9%2Fcb&state=xyz";
    let login = app.client.get(app.url("/login")).send().await.expect("login page");
    let (csrf_cookie, _) = set_cookie(&login, "wms_presession_csrf").expect("csrf cookie");
    let html = login.text().await.expect("html");
    let res = app
        .client
        .post(app.url("/login"))
        .header(COOKIE, &csrf_cookie)
        .form(&[
            ("csrf_token", csrf_of(&html).as_str()),
            ("email", first.admin_email.as_str()),
            ("password", first.admin_password.as_str()),
            ("next", next),
        ])
        .send()
        .await
        .expect("sign in");
    assert_eq!(res.status(), StatusCode::SEE_OTHER);
    let to_chooser = res.headers()[LOCATION].to_str().expect("location").to_owned();
    assert!(to_chooser.starts_with("/login/workspace?next=%2Foauth%2Fauthorize%3F"), "{to_chooser}");
    let (cookie, _) = set_cookie(&res, "wms_session").expect("cookie");
    let picker = app.client.get(app.url(&to_chooser)).header(COOKIE, &cookie).send().await.expect("page");
    let html = picker.text().await.expect("html");
    let b = Browser { cookie, csrf: csrf_of(&html) };
    // The page carries it in its form (HTML-escaped), and choosing goes there.
    assert!(html.contains("name=\"next\" value=\"/oauth/authorize?client_id=abc&amp;redirect_uri="), "{html}");
    let chosen =
        b.post(&app, "/login/workspace", &[("workspace_id", &second.id.to_string()), ("next", next)], true).await;
    assert_eq!(chosen.status(), StatusCode::SEE_OTHER);
    assert_eq!(chosen.headers()[LOCATION], next);
    // Another site is never a destination: the default page instead.
    let again = submit_login(&app, &first.admin_email, &first.admin_password).await;
    assert_eq!(again.headers()[LOCATION], "/login/workspace", "the default needs no query");
    let (cookie, _) = set_cookie(&again, "wms_session").expect("cookie");
    let picker = app.client.get(app.url("/login/workspace?next=//evil.example/x")).header(COOKIE, &cookie).send().await;
    let html = picker.expect("page").text().await.expect("html");
    assert!(html.contains("name=\"next\" value=\"/\""), "{html}");
    let b = Browser { cookie, csrf: csrf_of(&html) };
    let off = b
        .post(&app, "/login/workspace", &[("workspace_id", &first.id.to_string()), ("next", "//evil.example/x")], true)
        .await;
    assert_eq!(off.headers()[LOCATION], "/", "home, which sends each role to its page");
}

#[tokio::test]
async fn pages_load_nothing_from_other_hosts_and_forbid_it() {
    let app = TestApp::spawn().await;
    let ws = app.create_workspace(PlanTier::Advanced).await;
    let b = sign_in(&app, &ws).await;
    for path in [
        "/login",
        "/settings/workspace/api-keys",
        "/settings/integrations/webhooks",
        "/settings/workspace/rest-api",
        "/analytics",
    ] {
        let res = if path == "/login" { app.get(path).await } else { b.get(&app, path).await };
        assert_eq!(res.status(), 200, "{path}");
        let csp = res.headers()["content-security-policy"].to_str().expect("csp").to_owned();
        assert!(csp.contains("default-src 'none'") && csp.contains("script-src 'self'"), "{csp}");
        let html = res.text().await.expect("html");
        for attr in ["src=\"http", "href=\"http", "src=\"//", "href=\"//", "url(http"] {
            assert!(!html.contains(attr), "{path} loads {attr}");
        }
    }
    for asset in ["/assets/app.css", "/assets/app.js"] {
        let body = app.get(asset).await.text().await.expect("asset");
        assert!(!body.contains("http://") && !body.contains("https://"), "{asset}");
    }
}

#[tokio::test]
async fn the_rest_reference_lists_every_endpoint_with_a_curl_example() {
    let app = TestApp::spawn().await;
    let ws = app.create_workspace(PlanTier::Advanced).await;
    let b = sign_in(&app, &ws).await;
    let html = b.get(&app, "/settings/workspace/rest-api").await.text().await.expect("html");
    assert!(html.contains(&format!("{}/v1", app.address)));
    assert!(html.contains("1000 requests per rolling hour"));
    let doc: serde_json::Value = app.get("/v1/openapi.json").await.json().await.expect("doc");
    for (path, item) in doc["paths"].as_object().expect("paths") {
        for method in item.as_object().expect("item").keys() {
            let shown = format!("{}</span><code>{}</code>", method.to_uppercase(), path);
            assert!(html.contains(&shown), "{method} {path}");
        }
    }
    assert!(html.matches("curl -X").count() >= doc["paths"].as_object().map_or(0, |p| p.len()));
}

#[tokio::test]
async fn analytics_exports_the_daily_series_and_top_countries_as_csv() {
    let app = TestApp::spawn().await;
    let cipher = app::secrets::cipher(&app.settings, &app.db, false).await.expect("cipher");
    let creds = app::commands::seed_demo(&app.db, cipher.as_ref(), None).await.expect("seed");
    let ws = TestWorkspace {
        id: creds.workspace_id,
        admin_id: 0,
        admin_email: creds.email.expect("email"),
        admin_password: creds.password.expect("password"),
    };
    let b = sign_in(&app, &ws).await;
    let page = b.get(&app, "/analytics?channel=all&range=14d").await;
    assert_eq!(page.status(), 200);
    let html = page.text().await.expect("html");
    assert!(html.contains("<svg") && html.contains("id=\"totals\""));

    let daily = b.get(&app, "/analytics/daily.csv?channel=all&range=14d").await;
    assert_eq!(daily.status(), 200);
    assert!(daily.headers()["content-disposition"].to_str().unwrap_or("").contains("attachment"));
    let csv = daily.text().await.expect("csv");
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines[0], "date,sent,delivered,read,failed,delivery_rate,read_rate");
    assert_eq!(lines.len(), 15, "one row per day");

    let countries = b.get(&app, "/analytics/top-countries.csv?channel=all&range=90d").await.text().await.expect("csv");
    assert!(countries.starts_with("country,contacts,inbound,sent,delivered,read,failed"));
    assert!(countries.lines().count() > 1);

    assert_eq!(b.get(&app, "/analytics?range=8d").await.status(), 400);
    assert_eq!(b.get(&app, "/analytics?channel=999999").await.status(), 404);
}

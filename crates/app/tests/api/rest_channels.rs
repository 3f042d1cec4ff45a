//! `/v1/channels`

use reqwest::Method;
use serde_json::json;

use crate::helpers::{error_fields, problem, TestApp};

#[tokio::test]
async fn create_then_get_and_list_a_channel() {
    let app = TestApp::spawn().await;
    let (_, key) = app.advanced_with_key().await;
    let res = app
        .post_json(
            "/v1/channels",
            &key,
            &json!({"channel_type": "whatsapp", "display_name": " Support ", "identifier": "+1 415 555 0101"}),
        )
        .await;
    assert_eq!(res.status(), 201);
    let location = res.headers()["location"].to_str().expect("ascii").to_owned();
    let created: serde_json::Value = res.json().await.expect("json");
    assert_eq!(created["identifier"], "+14155550101");
    assert_eq!(created["display_name"], "Support");
    assert_eq!(created["status"], "active");
    assert!(created["created_at"].as_str().is_some_and(|t| t.ends_with('Z')));
    let keys: Vec<&String> = created.as_object().expect("object").keys().collect();
    assert_eq!(keys, ["channel_type", "created_at", "default_team_id", "display_name", "id", "identifier", "status"]);

    let (status, fetched) = app.get_json(&location, &key).await;
    assert_eq!((status, &fetched), (200, &created));
    let (status, list) = app.get_json("/v1/channels", &key).await;
    assert_eq!(status, 200);
    assert_eq!(list["data"], json!([created]));
    assert_eq!(list["next_cursor"], json!(null));
}

#[tokio::test]
async fn list_filters_and_paginates() {
    let app = TestApp::spawn().await;
    let (_, key) = app.advanced_with_key().await;
    let a = app.channel(&key, "whatsapp", "+14155550101", "active").await;
    let b = app.channel(&key, "messenger", "1001", "active").await;
    let c = app.channel(&key, "whatsapp", "+14155550102", "disconnected").await;

    let (_, wa) = app.get_json("/v1/channels?channel_type=whatsapp", &key).await;
    let ids: Vec<i64> = wa["data"].as_array().expect("data").iter().filter_map(|c| c["id"].as_i64()).collect();
    assert_eq!(ids, [a, c]);
    let (_, active) = app.get_json("/v1/channels?status=active", &key).await;
    let ids: Vec<i64> = active["data"].as_array().expect("data").iter().filter_map(|c| c["id"].as_i64()).collect();
    assert_eq!(ids, [a, b]);

    let (_, p1) = app.get_json("/v1/channels?limit=2", &key).await;
    assert_eq!(p1["data"].as_array().map(Vec::len), Some(2));
    let cursor = p1["next_cursor"].as_str().expect("a next page");
    let (_, p2) = app.get_json(&format!("/v1/channels?limit=2&cursor={cursor}"), &key).await;
    assert_eq!(p2["data"][0]["id"], c);
    assert_eq!(p2["next_cursor"], json!(null));
    // A cursor of the unfiltered listing is refused by a filtered one (and the other way round).
    let (status, p) = app.get_json(&format!("/v1/channels?status=active&limit=2&cursor={cursor}"), &key).await;
    assert_eq!((status, error_fields(&p)), (422, vec!["cursor".to_owned()]));
    let (_, w1) = app.get_json("/v1/channels?channel_type=whatsapp&limit=1", &key).await;
    let wc = w1["next_cursor"].as_str().expect("a next page");
    let (_, w2) = app.get_json(&format!("/v1/channels?channel_type=whatsapp&limit=1&cursor={wc}"), &key).await;
    assert_eq!(w2["data"][0]["id"], c);
    let (status, p) = app.get_json(&format!("/v1/channels?limit=1&cursor={wc}"), &key).await;
    assert_eq!((status, error_fields(&p)), (422, vec!["cursor".to_owned()]));
}

#[tokio::test]
async fn every_invalid_field_is_named() {
    let app = TestApp::spawn().await;
    let (_, key) = app.advanced_with_key().await;
    let res = app
        .post_json(
            "/v1/channels",
            &key,
            &json!({"channel_type": "sms", "display_name": "", "identifier": "", "status": "on"}),
        )
        .await;
    let p = problem(res, 422, "validation_failed").await;
    assert_eq!(error_fields(&p), ["channel_type", "display_name", "identifier", "status"]);
    let res = app
        .post_json(
            "/v1/channels",
            &key,
            &json!({"channel_type": "whatsapp", "display_name": "x", "identifier": "12345"}),
        )
        .await;
    assert_eq!(error_fields(&problem(res, 422, "validation_failed").await), ["identifier"]);
    let res = app
        .post_json(
            "/v1/channels",
            &key,
            &json!({"channel_type": "whatsapp", "display_name": "x", "identifier": "+14155550101", "colour": "red"}),
        )
        .await;
    assert_eq!(error_fields(&problem(res, 422, "validation_failed").await), ["colour"]);
    let res = app
        .post_json("/v1/channels", &key, &json!({"channel_type": 3, "display_name": "x", "identifier": "+14155550101"}))
        .await;
    assert_eq!(error_fields(&problem(res, 422, "validation_failed").await), ["channel_type"]);
    let (status, p) = app.get_json("/v1/channels?limit=0", &key).await;
    assert_eq!((status, error_fields(&p)), (422, vec!["limit".to_owned()]));
    let (status, p) = app.get_json("/v1/channels?channel_type=fax", &key).await;
    assert_eq!((status, error_fields(&p)), (422, vec!["channel_type".to_owned()]));
    let (status, p) = app.get_json("/v1/channels?cursor=garbage", &key).await;
    assert_eq!((status, error_fields(&p)), (422, vec!["cursor".to_owned()]));
    let (status, p) = app.get_json("/v1/channels?bogus=1", &key).await;
    assert_eq!((status, error_fields(&p)), (422, vec!["bogus".to_owned()]));
}

#[tokio::test]
async fn a_duplicate_identifier_is_a_conflict_but_other_workspaces_may_reuse_it() {
    let app = TestApp::spawn().await;
    let (_, key) = app.advanced_with_key().await;
    app.channel(&key, "whatsapp", "+14155550101", "active").await;
    let res = app
        .post_json(
            "/v1/channels",
            &key,
            &json!({"channel_type": "whatsapp", "display_name": "Again", "identifier": "+14155550101"}),
        )
        .await;
    problem(res, 409, "conflict").await;
    let (_, other) = app.advanced_with_key().await;
    app.channel(&other, "whatsapp", "+14155550101", "active").await;
}

#[tokio::test]
async fn bodies_must_be_json_well_formed_and_small() {
    let app = TestApp::spawn().await;
    let (_, key) = app.advanced_with_key().await;
    let res = app
        .authed(Method::POST, "/v1/channels", &key)
        .header("content-type", "text/plain")
        .body("{}")
        .send()
        .await
        .expect("request");
    problem(res, 415, "unsupported_media_type").await;
    let res = app.authed(Method::POST, "/v1/channels", &key).body("{}").send().await.expect("request");
    problem(res, 415, "unsupported_media_type").await;
    let res = app
        .authed(Method::POST, "/v1/channels", &key)
        .header("content-type", "application/json")
        .body("{\"channel_type\":")
        .send()
        .await
        .expect("request");
    problem(res, 400, "bad_request").await;
    let big = json!({"channel_type": "whatsapp", "display_name": "x".repeat(300 * 1024), "identifier": "+14155550101"});
    let res = app.post_json("/v1/channels", &key, &big).await;
    problem(res, 413, "payload_too_large").await;
}

#[tokio::test]
async fn another_workspaces_channel_is_not_found_and_ids_must_be_integers() {
    let app = TestApp::spawn().await;
    let (_, key_a) = app.advanced_with_key().await;
    let (_, key_b) = app.advanced_with_key().await;
    let b_channel = app.channel(&key_b, "instagram", "17841400000000001", "active").await;
    let res = app.authed(Method::GET, &format!("/v1/channels/{b_channel}"), &key_a).send().await.expect("request");
    problem(res, 404, "not_found").await;
    let (_, list) = app.get_json("/v1/channels", &key_a).await;
    assert_eq!(list["data"], json!([]));
    for bad in ["abc", "1.5", "99999999999999999999999", "-1"] {
        let res = app.authed(Method::GET, &format!("/v1/channels/{bad}"), &key_a).send().await.expect("request");
        problem(res, 404, "not_found").await;
    }
}

#[tokio::test]
async fn channels_need_credentials() {
    let app = TestApp::spawn().await;
    problem(app.get("/v1/channels").await, 401, "unauthenticated").await;
    let res = app.client.post(app.url("/v1/channels")).json(&json!({})).send().await.expect("request");
    problem(res, 401, "unauthenticated").await;
}

/// Identical concurrent listings share one query (`adapters_postgres::coalesce`), yet a listing
/// sent after a channel was created always shows it, and other workspaces and other filters never
/// get someone else's page.
#[tokio::test]
async fn concurrent_listings_never_miss_an_earlier_write_nor_mix_workspaces() {
    use std::sync::{Arc, Mutex};

    let app = Arc::new(TestApp::spawn().await);
    let (_, key) = app.advanced_with_key().await;
    let (_, other_key) = app.advanced_with_key().await;
    let theirs = app.channel(&other_key, "whatsapp", "+14155550199", "active").await;
    let created: Arc<Mutex<Vec<i64>>> = Arc::default();

    let writer = {
        let (app, key, created) = (app.clone(), key.clone(), created.clone());
        tokio::spawn(async move {
            for i in 0..20 {
                let id = app.channel(&key, "messenger", &format!("page-{i}"), "active").await;
                created.lock().expect("lock").push(id);
            }
        })
    };
    let reader = |path: &'static str, key: String| {
        let (app, created) = (app.clone(), created.clone());
        async move {
            let mut checked = 0;
            for _ in 0..15 {
                let before = created.lock().expect("lock").clone();
                let (status, page) = app.get_json(path, &key).await;
                assert_eq!(status, 200, "{page}");
                let ids: Vec<i64> =
                    page["data"].as_array().expect("data").iter().filter_map(|c| c["id"].as_i64()).collect();
                checked += 1;
                match path {
                    "/v1/channels?limit=100" => {
                        for id in &before {
                            assert!(ids.contains(id), "channel {id}, created before the request, is missing: {ids:?}");
                        }
                        assert!(!ids.contains(&theirs));
                    }
                    "/v1/channels?channel_type=whatsapp" => assert!(ids.is_empty(), "{ids:?}"),
                    _ => assert_eq!(ids, [theirs]),
                }
            }
            checked
        }
    };
    let mut readers = Vec::new();
    for _ in 0..8 {
        readers.push(tokio::spawn(reader("/v1/channels?limit=100", key.clone())));
        readers.push(tokio::spawn(reader("/v1/channels?channel_type=whatsapp", key.clone())));
        readers.push(tokio::spawn(reader("/v1/channels?limit=100&status=active", other_key.clone())));
    }
    let mut checked = 0;
    for r in readers {
        checked += r.await.expect("reader");
    }
    writer.await.expect("writer");
    assert_eq!(checked, 24 * 15);
    let (_, all) = app.get_json("/v1/channels?limit=100", &key).await;
    assert_eq!(all["data"].as_array().map(Vec::len), Some(20));
}

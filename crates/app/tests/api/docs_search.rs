//! `search_product_docs` against real PostgreSQL: ingest lifecycle, full-text, limits, malformed
//! queries, and hybrid search with every fallback, using a stand-in provider on a loopback port.

use app::config::Settings;
use diesel_async::RunQueryDsl;
use domain::docs::eval::{evaluate, EvalSet};
use domain::docs::{DocsSearch, SearchError, SearchMode, SearchResult};
use std::path::{Path, PathBuf};

use crate::docs_stand_in::{Behaviour, StandIn};
use crate::helpers::TestApp;

/// A directory of pages that is removed when dropped.
struct PagesDir(PathBuf);

impl PagesDir {
    fn new(pages: &[(&str, &str)]) -> Self {
        let dir = std::env::temp_dir().join(format!("wms-docs-{}", uuid::Uuid::new_v4().simple()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let d = PagesDir(dir);
        for (slug, body) in pages {
            d.write(slug, body);
        }
        d
    }

    fn write(&self, file: &str, text: &str) {
        std::fs::write(self.0.join(format!("{file}.md")), text).expect("write page");
    }
}

impl Drop for PagesDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn page(slug: &str, title: &str, body: &str) -> String {
    format!("---\nslug: {slug}\ntitle: {title}\ncategory: testing\n---\n\n# {title}\n\n## Overview\n\n{body}\n")
}

fn corpus() -> Vec<(&'static str, String)> {
    vec![
        (
            "keys",
            page("keys", "Create an API key", "Open the API Keys page and press Create key. The key is shown once."),
        ),
        (
            "hooks",
            page("hooks", "Set up a webhook", "A webhook destination receives events; verify the signature header."),
        ),
        ("cars", page("cars", "Parking the car", "Park the car in the garage and lock the doors.")),
    ]
}

async fn ingest(app: &TestApp, dir: &Path) -> domain::docs::IngestReport {
    app::docs_search::ingest_dir(&app.settings, &app.db, dir).await.expect("ingest")
}

async fn search(app: &TestApp, query: &str, limit: u8) -> SearchResult {
    app::docs_search::search_service(&app.settings, &app.db).search(query, limit).await.expect("search")
}

fn slugs(r: &SearchResult) -> Vec<&str> {
    r.hits.iter().map(|h| h.slug.as_str()).collect()
}

async fn sql(app: &TestApp, statement: &str) {
    let mut conn = app.db.conn().await.expect("conn");
    diesel::sql_query(statement).execute(&mut conn).await.expect("sql");
}

async fn corpus_app(adjust: impl FnOnce(&mut Settings)) -> (TestApp, PagesDir) {
    let app = TestApp::spawn_with(adjust).await;
    let pages = corpus();
    let dir = PagesDir::new(&pages.iter().map(|(s, b)| (*s, b.as_str())).collect::<Vec<_>>());
    let report = ingest(&app, &dir.0).await;
    assert_eq!(report.added.len(), 3, "{report:?}");
    (app, dir)
}

#[tokio::test]
async fn only_ready_documents_are_found() {
    let (app, dir) = corpus_app(|_| {}).await;
    dir.write("broken", "no front matter here, about the garage");
    let report = ingest(&app, &dir.0).await;
    assert_eq!(report.failed.len(), 1);
    assert_eq!(report.unchanged, 3);
    sql(&app, "UPDATE docs_documents SET status = 'pending' WHERE slug = 'hooks'").await;

    assert!(search(&app, "webhook signature", 5).await.hits.is_empty());
    assert_eq!(slugs(&search(&app, "garage", 5).await), ["cars"]);
    assert_eq!(slugs(&search(&app, "create key", 5).await), ["keys"]);
}

#[tokio::test]
async fn failed_page_keeps_its_reason() {
    let (app, dir) = corpus_app(|_| {}).await;
    dir.write("broken", "---\nslug: broken\ntitle: Broken\n---\nno category");
    ingest(&app, &dir.0).await;
    #[derive(diesel::QueryableByName)]
    struct Row {
        #[diesel(sql_type = diesel::sql_types::Text)]
        status: String,
        #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::Text>)]
        failure_reason: Option<String>,
    }
    let mut conn = app.db.conn().await.expect("conn");
    let row: Row = diesel::sql_query("SELECT status, failure_reason FROM docs_documents WHERE slug = 'broken'")
        .get_result(&mut conn)
        .await
        .expect("row");
    assert_eq!(row.status, "failed");
    assert!(row.failure_reason.unwrap_or_default().contains("category"));
}

#[tokio::test]
async fn malformed_queries_return_results_or_none_never_an_error() {
    let (app, _dir) = corpus_app(|_| {}).await;
    let long = "webhook ".repeat(1_300);
    let queries = [
        "",
        "   ",
        "\"",
        "\"unterminated phrase",
        "'",
        "''",
        "a & b",
        "|",
        "&|!():*",
        "!!!",
        "key:*",
        "(",
        ")",
        "-",
        "- -",
        "webhook -",
        "or",
        "and or not",
        "\\",
        "\u{0}",
        "🦀",
        "🦀 webhook 🎉",
        "<->",
        "key <-> create",
        "'; DROP TABLE docs_chunks; --",
        "%_",
        "ключ API",
        "鍵",
        long.as_str(),
        "x".repeat(10_000).leak(),
    ];
    for q in queries {
        let r = app::docs_search::search_service(&app.settings, &app.db).search(q, 5).await;
        let r = r.unwrap_or_else(|e| panic!("query {:?} failed: {e}", q.chars().take(40).collect::<String>()));
        assert_eq!(r.total, r.hits.len());
        assert_eq!(r.suggestion.is_some(), r.hits.is_empty());
    }
    assert_eq!(slugs(&search(&app, "🦀 webhook 🎉", 5).await), ["hooks"]);
    assert!(!search(&app, &long, 5).await.hits.is_empty());
}

#[tokio::test]
async fn limit_is_one_to_eight() {
    let (app, _dir) = corpus_app(|_| {}).await;
    let service = app::docs_search::search_service(&app.settings, &app.db);
    assert!(matches!(service.search("the", 0).await, Err(SearchError::InvalidLimit(0))));
    assert!(matches!(service.search("the", 9).await, Err(SearchError::InvalidLimit(9))));
    let one = service.search("key webhook car", 1).await.expect("limit 1");
    assert_eq!(one.hits.len(), 1);
    let eight = service.search("key webhook car", 8).await.expect("limit 8");
    assert_eq!(eight.hits.len(), 3, "every page once, no duplicates");
}

#[tokio::test]
async fn pages_matching_more_terms_rank_first_and_snippets_highlight() {
    let (app, _dir) = corpus_app(|_| {}).await;
    let r = search(&app, "lock the car doors webhook", 5).await;
    assert_eq!(slugs(&r), ["cars", "hooks"]);
    assert_eq!(r.mode, SearchMode::FullText);
    assert!(r.hits[0].snippet.contains("**car**"), "{}", r.hits[0].snippet);
    assert_eq!((r.hits[0].title.as_str(), r.hits[0].category.as_str()), ("Parking the car", "testing"));
}

#[tokio::test]
async fn no_hits_carry_a_suggestion() {
    let (app, _dir) = corpus_app(|_| {}).await;
    let r = search(&app, "How do I rotate the flux capacitor of my webhooks?", 5).await;
    assert!(!r.hits.is_empty(), "webhook is in the relaxed fill");
    let r = search(&app, "flux capacitor revoke", 5).await;
    assert!(r.hits.is_empty());
    let s = r.suggestion.expect("suggestion");
    assert_eq!(s.settings_page.map(|p| p.path).as_deref(), Some("/settings/workspace/api-keys"));
}

#[tokio::test]
async fn reingest_replaces_changed_pages_and_skips_unchanged() {
    let (app, dir) = corpus_app(|_| {}).await;
    dir.write("cars", &page("cars", "Parking the car", "Leave the bicycle in the shed."));
    std::fs::remove_file(dir.0.join("hooks.md")).expect("remove");
    let report = ingest(&app, &dir.0).await;
    assert_eq!((report.updated.as_slice(), report.unchanged, report.removed), (&["cars".to_owned()][..], 1, 1));
    assert!(search(&app, "garage", 5).await.hits.is_empty());
    assert_eq!(slugs(&search(&app, "bicycle shed", 5).await), ["cars"]);
    assert!(search(&app, "webhook", 5).await.hits.is_empty());
    let again = ingest(&app, &dir.0).await;
    assert!(!again.changed() && again.unchanged == 2, "{again:?}");
}

#[tokio::test]
async fn the_real_documentation_ingests_and_meets_the_recall_bar() {
    let app = TestApp::spawn().await;
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let report = ingest(&app, &root.join("docs/product")).await;
    assert!(report.failed.is_empty(), "{:?}", report.failed);
    assert!(report.added.len() >= 30);
    let set: EvalSet =
        serde_json::from_slice(&std::fs::read(root.join("docs/search-eval.json")).expect("eval set")).expect("json");
    let service = app::docs_search::search_service(&app.settings, &app.db);
    let r = evaluate(&service, SearchMode::FullText, &set).await.expect("eval");
    assert!(r.recall_at_5 >= 0.85, "full-text Recall@5 {:.3}; misses: {:#?}", r.recall_at_5, r.misses);
}

// ---- hybrid ---------------------------------------------------------------------------------

fn hybrid(stand_in: &StandIn, rerank: bool) -> impl FnOnce(&mut Settings) {
    let url = stand_in.url.clone();
    move |s: &mut Settings| {
        s.embeddings.url = Some(format!("{url}/v1/embeddings"));
        s.embeddings.model = Some("stand-in".into());
        s.embeddings.timeout_ms = 300;
        if rerank {
            s.rerank.url = Some(url);
            s.rerank.timeout_ms = 300;
        }
    }
}

#[tokio::test]
async fn hybrid_finds_by_meaning_and_says_so() {
    let stand_in = StandIn::start().await;
    let (app, _dir) = corpus_app(hybrid(&stand_in, false)).await;
    // "automobile" is in no page; the stand-in's vectors know it means "car".
    let r = search(&app, "automobile", 5).await;
    assert_eq!((r.mode, r.reranked, r.fallback_reason.as_deref()), (SearchMode::Hybrid, false, None));
    assert_eq!(slugs(&r), ["cars"]);
}

#[tokio::test]
async fn hybrid_switch_off_means_full_text() {
    let stand_in = StandIn::start().await;
    let (app, _dir) = corpus_app(|s| {
        hybrid(&stand_in, false)(s);
        s.co_admin.rag_hybrid = false;
    })
    .await;
    let r = search(&app, "automobile", 5).await;
    assert_eq!((r.mode, r.fallback_reason.as_deref()), (SearchMode::FullText, None));
    assert!(r.hits.is_empty());
}

#[tokio::test]
async fn every_provider_failure_falls_back_to_full_text() {
    let stand_in = StandIn::start().await;
    let (app, _dir) = corpus_app(hybrid(&stand_in, false)).await;
    for (behaviour, reason) in [
        (Behaviour::Status500, "HTTP 500"),
        (Behaviour::Slow, "did not answer within 300 ms"),
        (Behaviour::BadJson, "unusable"),
        (Behaviour::WrongDimension, "dimensions"),
    ] {
        stand_in.set(behaviour);
        let r = search(&app, "garage car", 5).await;
        assert_eq!(r.mode, SearchMode::FullText, "{behaviour:?}");
        assert!(r.fallback_reason.as_deref().unwrap_or_default().contains(reason), "{behaviour:?}: {r:?}");
        assert_eq!(slugs(&r), ["cars"]);
    }
}

#[tokio::test]
async fn provider_down_falls_back_to_full_text() {
    let stand_in = StandIn::start().await;
    let (mut app, _dir) = corpus_app(hybrid(&stand_in, false)).await;
    app.settings.embeddings.url = Some(format!("http://{}/v1/embeddings", StandIn::closed_port()));
    let r = search(&app, "garage", 5).await;
    assert_eq!(r.mode, SearchMode::FullText);
    assert!(r.fallback_reason.clone().unwrap_or_default().contains("unreachable"));
    assert_eq!(slugs(&r), ["cars"]);
}

#[tokio::test]
async fn rerank_orders_the_hits_and_its_failure_falls_back() {
    let stand_in = StandIn::start().await;
    let (app, _dir) = corpus_app(hybrid(&stand_in, true)).await;
    // The stand-in's reranker puts the documents mentioning "webhook" first.
    let r = search(&app, "car webhook", 5).await;
    assert_eq!((r.mode, r.reranked), (SearchMode::Hybrid, true));
    assert_eq!(slugs(&r)[0], "hooks");
    stand_in.set(Behaviour::RerankStatus500);
    let r = search(&app, "car webhook", 5).await;
    assert_eq!((r.mode, r.reranked), (SearchMode::FullText, false));
    assert!(r.fallback_reason.unwrap_or_default().starts_with("rerank"));
}

#[tokio::test]
async fn vectors_reload_when_the_ingest_changes() {
    let stand_in = StandIn::start().await;
    let (app, dir) = corpus_app(hybrid(&stand_in, false)).await;
    let service = app::docs_search::search_service(&app.settings, &app.db);
    assert_eq!(slugs(&service.search("automobile", 5).await.expect("search")), ["cars"]);
    dir.write("cars", &page("cars", "Cycling", "Leave the bicycle in the shed."));
    ingest(&app, &dir.0).await;
    let r = service.search("automobile", 5).await.expect("search");
    assert!(r.hits.is_empty(), "the old vectors are gone: {r:?}");
    assert_eq!(r.mode, SearchMode::Hybrid);
}

#[tokio::test]
async fn embeddings_are_stored_with_model_and_dimension() {
    let stand_in = StandIn::start().await;
    let (app, _dir) = corpus_app(hybrid(&stand_in, false)).await;
    #[derive(diesel::QueryableByName)]
    struct Row {
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        n: i64,
    }
    let mut conn = app.db.conn().await.expect("conn");
    let row: Row = diesel::sql_query(
        "SELECT count(*) AS n FROM docs_chunks WHERE embedding_model = 'stand-in' AND embedding_dim = 16
            AND cardinality(embedding) = 16",
    )
    .get_result(&mut conn)
    .await
    .expect("count");
    assert!(row.n >= 3);
}

// ---- through the execute endpoint -------------------------------------------------------------

async fn execute(app: &TestApp, ws: i64, token: &str, arguments: serde_json::Value) -> (u16, serde_json::Value) {
    let body = serde_json::json!({"tool": "search_product_docs", "arguments": arguments});
    let res = app
        .client
        .post(app.url(&format!("/workspaces/{ws}/co-admin/tools/execute")))
        .bearer_auth(token)
        .json(&body)
        .send()
        .await
        .expect("request");
    (res.status().as_u16(), res.json().await.expect("json"))
}

#[tokio::test]
async fn the_execute_endpoint_answers_with_the_spec_shape() {
    let (app, _dir) = corpus_app(|_| {}).await;
    let ws = app.create_workspace(domain::workspace::PlanTier::Free).await;
    let token = crate::credentials::token_for(&app, &ws.admin_email, &ws.admin_password, Some(ws.id)).await;

    let (status, body) = execute(&app, ws.id, &token, serde_json::json!({"query": "garage car"})).await;
    assert_eq!(status, 200, "{body}");
    let r = &body["result"];
    assert_eq!(r["query"], "garage car");
    assert_eq!(r["total"], 1);
    assert_eq!(r["mode"], "full_text");
    let hit = &r["hits"][0];
    assert_eq!(
        (hit["slug"].as_str(), hit["title"].as_str(), hit["category"].as_str()),
        (Some("cars"), Some("Parking the car"), Some("testing"))
    );
    assert!(hit["snippet"].as_str().is_some_and(|s| s.contains("**garage**")), "{hit}");
    assert!(hit["score"].as_f64().is_some_and(|s| s > 0.0));
    assert!(hit["url"].as_str().is_some_and(|u| u.starts_with("/docs/cars#")), "{hit}");

    // The tool schema caps `query` at 500 characters (longer is a 422 naming it); the port itself
    // truncates, see `malformed_queries_return_results_or_none_never_an_error`.
    for q in ["&|!():*", "🦀", "\"", "-", "x".repeat(500).as_str()] {
        let (status, body) = execute(&app, ws.id, &token, serde_json::json!({"query": q, "limit": 8})).await;
        assert_eq!(status, 200, "{body}");
        assert!(body["result"]["hits"].as_array().is_some_and(Vec::is_empty));
        assert!(body["result"]["suggestion"]["message"].is_string());
    }
}

/// `wms serve` listens once the documentation it carries is stored: the first search after it
/// answers finds pages (the ingest used to run behind the listener, and a client that came at
/// once found nothing).
#[tokio::test]
async fn a_served_binary_answers_documentation_searches_as_soon_as_it_listens() {
    let app = TestApp::spawn().await;
    let ws = app.create_workspace(domain::workspace::PlanTier::Advanced).await;
    let token = crate::credentials::admin_token(&app, &ws).await;
    sql(&app, "DELETE FROM docs_chunks").await;
    sql(&app, "DELETE FROM docs_documents").await;
    let (mut server, base) = crate::events_listen::serve(&app).await;
    let res = app
        .client
        .post(format!("{base}/workspaces/{}/co-admin/tools/execute", ws.id))
        .bearer_auth(&token)
        .json(&serde_json::json!({"tool": "search_product_docs", "arguments": {"query": "create an API key"}}))
        .send()
        .await
        .expect("request");
    let body: serde_json::Value = res.json().await.expect("json");
    let _ = server.kill();
    let _ = server.wait();
    let hits = body["result"]["hits"].as_array().map_or(0, Vec::len);
    assert!(hits > 0, "{body}");
}

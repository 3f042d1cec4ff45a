//! `/docs` and `/docs/{slug}`: the product documentation as public pages, over the real embedded
//! documentation and a real index. Every section the search can point at exists on its page, and
//! every link inside the pages resolves.

use std::collections::{BTreeSet, HashMap};

use domain::docs::DocsSearch;
use serde_json::Value;

use crate::assistant_helpers::sql_json;
use crate::helpers::TestApp;

/// A server whose index holds the documentation compiled into the binary, as `wms serve` ingests it.
async fn docs_app() -> TestApp {
    let app = TestApp::spawn().await;
    let report = app::docs_search::ingest_embedded(&app.settings, &app.db).await.expect("ingest");
    assert!(report.failed.is_empty(), "{:?}", report.failed);
    app
}

async fn html(app: &TestApp, path: &str) -> (u16, String) {
    let res = app.get(path).await;
    let status = res.status().as_u16();
    (status, res.text().await.expect("body"))
}

/// Every value of `attr="…"` in `html` (the pages are server-rendered and escape quotes).
fn attributes(html: &str, attr: &str) -> Vec<String> {
    let needle = format!(" {attr}=\"");
    html.match_indices(&needle)
        .filter_map(|(i, _)| {
            let rest = &html[i + needle.len()..];
            rest.find('"').map(|end| rest[..end].replace("&amp;", "&"))
        })
        .collect()
}

fn ids(html: &str) -> Vec<String> {
    attributes(html, "id")
}

#[tokio::test]
async fn every_page_and_section_the_index_holds_resolves() {
    let app = docs_app().await;
    let rows = sql_json(
        &app,
        "SELECT json_agg(json_build_array(d.slug, c.heading))::text AS j FROM docs_chunks c \
         JOIN docs_documents d ON d.id = c.document_id WHERE d.status = 'ready' AND $1::bigint IS NOT NULL",
        0,
    )
    .await;
    let mut sections: HashMap<String, BTreeSet<String>> = HashMap::new();
    for r in rows.as_array().expect("rows") {
        let (slug, heading) = (r[0].as_str().expect("slug"), r[1].as_str().expect("heading"));
        sections.entry(slug.to_owned()).or_default().insert(domain::docs::section_anchor(heading));
    }
    assert_eq!(sections.len(), app::docs_search::library().len(), "every embedded page is indexed");
    for (slug, anchors) in &sections {
        let (status, body) = html(&app, &format!("/docs/{slug}")).await;
        assert_eq!(status, 200, "/docs/{slug}");
        let ids = ids(&body);
        let unique: BTreeSet<&String> = ids.iter().collect();
        assert_eq!(unique.len(), ids.len(), "duplicate ids on /docs/{slug}: {ids:?}");
        for a in anchors {
            assert!(ids.contains(a), "/docs/{slug} has no section #{a}");
        }
    }

    // And what the search returns is exactly such a link.
    let service = app::docs_search::search_service(&app.settings, &app.db);
    for q in ["rotate a webhook secret", "verify signatures in python", "api key expiry", "instagram insights"] {
        let r = service.search(q, 5).await.expect("search");
        assert!(!r.hits.is_empty(), "{q}");
        for h in r.hits {
            let (path, anchor) = h.url.split_once('#').expect("url with a section");
            assert_eq!(path, format!("/docs/{}", h.slug));
            assert!(sections[&h.slug].contains(anchor), "{q}: {}", h.url);
        }
    }
}

#[tokio::test]
async fn every_link_inside_the_pages_resolves() {
    let app = docs_app().await;
    let library = app::docs_search::library();
    let mut pages: HashMap<String, Vec<String>> = HashMap::new();
    let mut links: Vec<(String, String)> = Vec::new();
    for p in library.pages() {
        let path = format!("/docs/{}", p.meta.slug);
        let (status, body) = html(&app, &path).await;
        assert_eq!(status, 200, "{path}");
        for href in attributes(&body, "href").into_iter().chain(attributes(&body, "src")) {
            links.push((path.clone(), href));
        }
        pages.insert(path, ids(&body));
    }
    let (_, index) = html(&app, "/docs").await;
    links.extend(attributes(&index, "href").into_iter().map(|h| ("/docs".to_owned(), h)));
    pages.insert("/docs".into(), ids(&index));
    // Cross-references are links: the pages refer to each other by title.
    let cross = links.iter().filter(|(from, to)| to.starts_with("/docs/") && from != "/docs").count();
    assert!(cross >= 30, "only {cross} links between pages");

    let mut checked = 0;
    for (from, href) in &links {
        assert!(!href.starts_with("javascript:"), "{from}: {href}");
        if href.starts_with("http://") || href.starts_with("https://") || href.starts_with("mailto:") {
            continue; // outside links are not followed: the pages work offline
        }
        let (path, fragment) = match href.split_once('#') {
            Some((p, f)) => (if p.is_empty() { from.as_str() } else { p }, Some(f)),
            None => (href.as_str(), None),
        };
        assert!(path.starts_with('/'), "{from}: relative link {href}");
        if let Some(page_ids) = pages.get(path) {
            if let Some(f) = fragment {
                assert!(page_ids.iter().any(|id| id == f), "{from}: {href} names no section");
            }
        } else {
            // Another page of the app (settings, analytics, assets): it exists, even if it asks
            // a visitor to sign in first.
            let status = app.get(path).await.status().as_u16();
            assert!(matches!(status, 200 | 303), "{from}: {href} answers {status}");
        }
        checked += 1;
    }
    assert!(checked > 100, "{checked}");
}

#[tokio::test]
async fn the_index_lists_every_page_by_category_and_searches_without_sign_in() {
    let app = docs_app().await;
    let res = app.get("/docs").await;
    assert_eq!(res.status(), 200);
    assert!(res
        .headers()
        .get("content-security-policy")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("default-src 'none'")));
    let body = res.text().await.expect("body");
    for p in app::docs_search::library().pages() {
        assert!(body.contains(&format!("href=\"/docs/{}\"", p.meta.slug)), "{} missing", p.meta.slug);
    }
    assert!(body.contains("id=\"category-webhooks\""));

    let (status, body) = html(&app, "/docs?q=rotate+a+webhook+secret").await;
    assert_eq!(status, 200);
    assert!(body.contains("class=\"hit\" href=\"/docs/webhooks-secrets#"), "{body}");
    assert!(body.contains("<mark>"), "{body}");
    let (status, body) = html(&app, "/docs?q=%26%7C!()%3A*").await;
    assert_eq!(status, 200);
    assert!(body.contains("No page matches"), "{body}");
}

#[tokio::test]
async fn an_unknown_page_is_a_404_page_that_offers_the_search() {
    let app = TestApp::spawn().await;
    let (status, body) = html(&app, "/docs/no-such-page").await;
    assert_eq!(status, 404);
    assert!(body.contains("There is no documentation page named “no-such-page”"), "{body}");
    assert!(body.contains("value=\"no such page\""), "{body}");
    assert!(body.contains("href=\"/docs\""));
    let (status, body) = html(&app, "/docs/%3Cscript%3E").await;
    assert_eq!(status, 404);
    assert!(!body.contains("<script>") && body.contains("&lt;script&gt;"), "{body}");
}

#[tokio::test]
async fn the_messenger_and_instagram_note_points_to_a_page_that_exists() {
    let app = TestApp::spawn().await;
    let (status, body) = html(&app, domain::assistant::MESSENGER_INSTAGRAM_DOCS).await;
    assert_eq!(status, 200);
    for words in ["Meta Business Suite", "professional dashboard", "get_channel_analytics"] {
        assert!(body.contains(words), "{words}");
    }
    let note: Value = serde_json::to_value(domain::assistant::channel_analytics(
        domain::assistant::ChannelStats::OtherPlatform(domain::assistant::ChannelSummary {
            id: domain::channels::ChannelId(1),
            channel_type: domain::channels::ChannelType::Instagram,
            display_name: "Shop".into(),
            identifier: "17841".into(),
            status: "active".into(),
        }),
        "7d".into(),
        7,
    ))
    .expect("json");
    assert!(note["note"].as_str().is_some_and(|n| n.contains(domain::assistant::MESSENGER_INSTAGRAM_DOCS)));
}

//! `/docs` and `/docs/{slug}`: the product documentation as public pages (no sign-in), rendered
//! from the same Markdown that `search_product_docs` indexes, with the same search in a box. Every
//! search hit's `url` lands on its section here.

pub mod render;

use actix_web::http::header::{self, CacheControl, CacheDirective};
use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use domain::docs::{visitor_key, DocsLibrary, SearchError, SearchResult, VisitorVerdict, MAX_LIMIT};
use maud::{html, Markup};
use serde::Deserialize;

use super::layout::public;
use super::PageError;
use crate::state::AppState;

/// The index's path.
pub const PATH: &str = "/docs";

#[derive(Debug, Default, Deserialize)]
struct SearchQuery {
    #[serde(default)]
    q: Option<String>,
}

/// The index by category, and the search results when `q` is given.
///
/// # Errors
/// When the search fails on the database.
pub async fn index(req: HttpRequest, state: web::Data<AppState>) -> Result<HttpResponse, PageError> {
    // A malformed query string is read as no query: this is a public page, not an API.
    let q = serde_urlencoded::from_str::<SearchQuery>(req.query_string()).unwrap_or_default().q;
    let q = q.map(|q| q.trim().to_owned()).filter(|q| !q.is_empty());
    let assistant = &state.assistant.tools;
    let library = assistant.library();
    let results = match (&q, assistant.docs_search()) {
        (Some(q), Some(search)) => {
            // Visitors have no credentials: their searches are paced per client address and
            // never reach a paid provider (`docs/search.md`, "Visitors").
            let client = req.peer_addr().map_or_else(|| "ip:unknown".to_owned(), |a| visitor_key(a.ip()));
            let now = state.auth.clock.now();
            if let VisitorVerdict::Limited { retry_after_secs } = state.pages.docs_visitors.admit(&client, now).await? {
                return Err(PageError::RateLimited { retry_after: u64::from(retry_after_secs) });
            }
            let found = search.search_full_text(q, MAX_LIMIT).await;
            Some(Ok(found.map_err(|e| match e {
                // The database out of reach stays a 503, as everywhere.
                SearchError::Unknown(repo) => PageError::from(repo),
                other => PageError::Internal(anyhow::anyhow!(other)),
            })?))
        }
        (Some(_), None) => Some(Err(())),
        (None, _) => None,
    };
    let body = html! {
        h1 { "Documentation" }
        p.lead { "How wms works: channels, the REST API, webhooks, API keys, analytics and the assistant. "
            "The assistant's " code { "search_product_docs" } " tool searches these same pages." }
        (search_form(q.as_deref()))
        @match &results {
            Some(Ok(r)) => (hits(r)),
            Some(Err(())) => div.notice role="status" { p { "Search is not available on this installation; browse the pages below." } },
            None => {},
        }
        (categories(library))
    };
    let cache = if q.is_some() { CacheDirective::NoStore } else { CacheDirective::NoCache };
    Ok(html_response(StatusCode::OK, cache, public("Documentation", body)))
}

/// One page, or a 404 page that offers the index and the search.
///
/// # Errors
/// Never; an unknown slug is a 404 page.
pub async fn page(slug: web::Path<String>, state: web::Data<AppState>) -> Result<HttpResponse, PageError> {
    let library = state.assistant.tools.library();
    let Some(page) = library.get(&slug) else {
        let words = slug.replace(['-', '_'], " ");
        let body = html! {
            h1 { "Page not found" }
            p.error-text role="alert" { "There is no documentation page named “" (slug.as_str()) "”." }
            p { "Search for it, or " a href=(PATH) { "browse every page" } "." }
            (search_form(Some(words.trim())))
        };
        return Ok(html_response(StatusCode::NOT_FOUND, CacheDirective::NoStore, public("Page not found", body)));
    };
    let rendered = render::render(page, library);
    let body = html! {
        nav.breadcrumb aria-label="Breadcrumb" {
            a href=(PATH) { "Documentation" } " › "
            a href={ (PATH) "#" (category_anchor(&page.meta.category)) } { (category_label(&page.meta.category)) }
        }
        div.docs {
            @if !rendered.toc.is_empty() {
                nav.doc-toc aria-label="On this page" {
                    h2 { "On this page" }
                    ul { @for t in &rendered.toc {
                        li class={ "doc-toc-" (t.level) } { a href={ "#" (t.anchor) } { (inline_code(&t.text)) } }
                    } }
                }
            }
            article.doc { (maud::PreEscaped(rendered.html)) }
        }
    };
    Ok(html_response(StatusCode::OK, CacheDirective::NoCache, public(&page.meta.title, body)))
}

fn html_response(status: StatusCode, cache: CacheDirective, body: Markup) -> HttpResponse {
    HttpResponse::build(status)
        .insert_header(CacheControl(vec![cache]))
        .insert_header((header::CONTENT_TYPE, "text/html; charset=utf-8"))
        .body(body.into_string())
}

fn search_form(q: Option<&str>) -> Markup {
    html! {
        form.card.row.docs-search method="get" action=(PATH) role="search" {
            div.field {
                label for="q" { "Search the documentation" }
                input #q type="search" name="q" value=[q] maxlength="500" placeholder="e.g. rotate a webhook secret";
            }
            div.field { button type="submit" { "Search" } }
        }
    }
}

fn hits(r: &SearchResult) -> Markup {
    html! {
        section.card.hits aria-labelledby="hits-title" {
            h2 #hits-title { "Results for “" (r.query) "”" }
            @if r.hits.is_empty() {
                p { "No page matches." }
                @if let Some(s) = &r.suggestion {
                    p { (s.message) }
                    @if let Some(q) = &s.rephrased_query {
                        p { "Try " a href={ (PATH) "?q=" (encode(q)) } { (q) } "." }
                    }
                    @if let Some(p) = &s.settings_page {
                        p { "Related settings page: " a href=(p.path) { (p.title) } "." }
                    }
                }
            } @else {
                ol.hit-list {
                    @for h in &r.hits {
                        li {
                            a.hit href=(h.url) { (h.title) }
                            " " span.badge { (category_label(&h.category)) }
                            p.snippet { (snippet(&h.snippet)) }
                        }
                    }
                }
            }
        }
    }
}

/// The search marks matched words `**like this**`; shown as `<mark>`, everything else as text.
fn snippet(s: &str) -> Markup {
    html! { @for (i, part) in s.split("**").enumerate() { @if i % 2 == 1 { mark { (part) } } @else { (part) } } }
}

/// `code` spans of a heading as `<code>`, the rest as text.
fn inline_code(s: &str) -> Markup {
    html! { @for (i, part) in s.split('`').enumerate() { @if i % 2 == 1 { code { (part) } } @else { (part) } } }
}

fn categories(library: &DocsLibrary) -> Markup {
    html! {
        div.categories {
            @for (category, pages) in library.by_category() {
                section.card id=(category_anchor(category)) {
                    h2 { (category_label(category)) }
                    ul { @for p in pages { li { a href={ (PATH) "/" (p.meta.slug) } { (p.meta.title) } } } }
                }
            }
        }
    }
}

fn category_anchor(category: &str) -> String {
    format!("category-{}", domain::docs::section_anchor(category))
}

/// `rest-api` → `REST API`, `webhooks` → `Webhooks`.
fn category_label(category: &str) -> String {
    category
        .split(['-', '_'])
        .map(|w| match w {
            "api" | "rest" | "mcp" | "ai" => w.to_ascii_uppercase(),
            _ => {
                let mut c = w.chars();
                c.next().map(|f| f.to_uppercase().chain(c).collect()).unwrap_or_default()
            }
        })
        .collect::<Vec<String>>()
        .join(" ")
}

fn encode(s: &str) -> String {
    form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_and_snippets() {
        assert_eq!(category_label("rest-api"), "REST API");
        assert_eq!(category_label("webhooks"), "Webhooks");
        assert_eq!(snippet("a **b** <c>").into_string(), "a <mark>b</mark> &lt;c&gt;");
        assert_eq!(inline_code("The `wmsk_` prefix").into_string(), "The <code>wmsk_</code> prefix");
    }
}

//! `/settings/workspace/rest-api`: a readable REST reference rendered on the server from the same
//! OpenAPI document that `GET /v1/openapi.json` serves ([`crate::openapi::ApiDoc`]), so it lists
//! exactly what the running code does and needs nothing from the internet.

use actix_web::{web, HttpResponse};
use maud::{html, Markup};
use serde_json::{json, Map, Value};
use utoipa::OpenApi;

use super::layout::{copy_button, page};
use super::session::Signed;
use super::PageError;
use crate::openapi::ApiDoc;
use crate::state::AppState;

/// The page's path.
pub const PATH: &str = "/settings/workspace/rest-api";
const METHODS: [&str; 5] = ["get", "post", "put", "patch", "delete"];

/// The reference.
///
/// # Errors
/// Infrastructure failures (the document cannot fail to build).
pub async fn show(s: Signed, state: web::Data<AppState>) -> Result<HttpResponse, PageError> {
    let doc = serde_json::to_value(ApiDoc::openapi()).map_err(|e| PageError::Internal(e.into()))?;
    let origin = state.pages.site.trim_end_matches('/').to_owned();
    let per_hour = state.auth.rate_limit.limit;
    let body = render(&doc, &origin, per_hour, &s);
    Ok(HttpResponse::Ok()
        .content_type("text/html; charset=utf-8")
        .body(page("REST API reference", PATH, &s, body).into_string()))
}

struct Op<'a> {
    method: &'static str,
    path: &'a str,
    op: &'a Value,
}

fn operations(doc: &Value) -> Vec<Op<'_>> {
    let mut out = Vec::new();
    if let Some(paths) = doc["paths"].as_object() {
        for (path, item) in paths {
            for m in METHODS {
                if let Some(op) = item.get(m) {
                    out.push(Op { method: m, path, op });
                }
            }
        }
    }
    out
}

fn anchor(o: &Op<'_>) -> String {
    o.op["operationId"]
        .as_str()
        .map_or_else(|| format!("{}-{}", o.method, o.path.replace(['/', '{', '}'], "-")), str::to_owned)
}

fn render(doc: &Value, origin: &str, per_hour: u32, s: &Signed) -> Markup {
    let ops = operations(doc);
    let mut tags: Vec<(String, String)> = doc["tags"]
        .as_array()
        .map(|a| a.iter().map(|t| (text(&t["name"]), text(&t["description"]))).collect())
        .unwrap_or_default();
    for o in &ops {
        let t = tag(o);
        if !tags.iter().any(|(n, _)| *n == t) {
            tags.push((t, String::new()));
        }
    }
    let base = format!("{origin}/v1");
    html! {
        h1 { "REST API reference" }
        p.lead { (text(&doc["info"]["title"])) ", version " (text(&doc["info"]["version"])) ". Generated from this server's OpenAPI 3.1 document "
            "(" a href="/v1/openapi.json" { "/v1/openapi.json" } "), so it always matches what the server does." }
        // A key is what reaches the REST API: the plan that creating one needs is the API's.
        @if let Some(required) = s.plan_required_for(domain::access::Action::ApiKeysCreate) {
            (super::layout::plan_required("The REST API", required, s.plan()))
        }
        section.card aria-labelledby="basics" {
            h2 #basics { "Basics" }
            dl.kv {
                dt { "Base URL" } dd { code #base-url { (base) } " " (copy_button("base-url", "Copy")) }
                dt { "Authentication" } dd {
                    "Send an API key in every request: " code { "Authorization: Bearer wmsk_…" } ". "
                    "Create keys on the " a href="/settings/workspace/api-keys" { "API Keys page" } " (" code { "advanced" } " plan). "
                    "The scheme word is case-insensitive; keys in the query string are never accepted."
                }
                dt { "Rate limit" } dd {
                    (per_hour) " requests per rolling hour per key, across every server. Each response carries "
                    code { "RateLimit-Policy" } ", " code { "RateLimit" } " and " code { "X-RateLimit-Limit/-Remaining/-Reset" }
                    "; a " code { "429" } " adds " code { "Retry-After" } " (seconds)."
                }
                dt { "Errors" } dd {
                    "Every error is " code { "application/problem+json" } " (RFC 9457) with a stable " code { "code" }
                    ", such as " code { "unauthenticated" } ", " code { "token_revoked" } ", " code { "plan_required" } ", "
                    code { "not_found" } ", " code { "validation_failed" } " (with " code { "errors[]" } " per field) and " code { "rate_limited" } "."
                }
                dt { "Lists" } dd { "Query " code { "limit" } " (1–100, default 25) and " code { "cursor" } "; bodies are "
                    code { "{\"data\": […], \"next_cursor\": …}" } ". Timestamps are RFC 3339 UTC; ids are integers." }
            }
        }
        nav.card aria-labelledby="toc-title" {
            h2 #toc-title { "Endpoints" }
            ul.toc {
                @for o in &ops {
                    li { a href={ "#" (anchor(o)) } { span.mono { (o.method.to_uppercase()) " " (o.path) } } }
                }
            }
        }
        @for (name, description) in &tags {
            @let in_tag: Vec<&Op<'_>> = ops.iter().filter(|o| tag(o) == *name).collect();
            @if !in_tag.is_empty() {
                section aria-labelledby={ "tag-" (name) } {
                    h2 id={ "tag-" (name) } { (title_case(name)) }
                    @if !description.is_empty() { p.muted { (description) } }
                    @for o in in_tag { (endpoint(doc, o, origin)) }
                }
            }
        }
    }
}

fn tag(o: &Op<'_>) -> String {
    o.op["tags"][0].as_str().unwrap_or("other").to_owned()
}

fn title_case(s: &str) -> String {
    let mut c = s.chars();
    c.next().map(|f| f.to_uppercase().collect::<String>() + c.as_str()).unwrap_or_default()
}

/// The document's descriptions use Markdown backticks for code; shown as `<code>`, the rest as text.
fn inline_code(s: &str) -> Markup {
    html! {
        @for (i, part) in s.split('`').enumerate() {
            @if i % 2 == 1 { code { (part) } } @else { (part) }
        }
    }
}

fn text(v: &Value) -> String {
    v.as_str().unwrap_or("").to_owned()
}

fn is_public(o: &Op<'_>) -> bool {
    o.op["security"].as_array().is_some_and(|a| a.iter().all(|r| r.as_object().is_some_and(Map::is_empty)))
}

fn endpoint(doc: &Value, o: &Op<'_>, origin: &str) -> Markup {
    let id = anchor(o);
    let params: Vec<&Value> = o.op["parameters"].as_array().map(|a| a.iter().collect()).unwrap_or_default();
    let body_schema = o.op["requestBody"]["content"]["application/json"]["schema"].clone();
    let has_body = !body_schema.is_null();
    let mut responses: Vec<(&String, &Value)> =
        o.op["responses"].as_object().map(|m| m.iter().collect()).unwrap_or_default();
    responses.sort_by(|a, b| a.0.cmp(b.0));
    let curl_id = format!("curl-{id}");
    html! {
        details.endpoint id=(id) {
            summary {
                span class={ "method m-" (o.method) } { (o.method.to_uppercase()) }
                code { (o.path) }
                span.muted { (inline_code(&text(&o.op["summary"]))) }
            }
            div.body {
                @if let Some(d) = o.op["description"].as_str() { p { (inline_code(d)) } }
                @if is_public(o) { p { span.badge { "no credentials needed" } } }
                @if !params.is_empty() {
                    h3 { "Parameters" }
                    div.table-wrap { table {
                        thead { tr { th { "Name" } th { "In" } th { "Type" } th { "Required" } th { "Description" } } }
                        tbody {
                            @for p in &params {
                                tr {
                                    td { code { (text(&p["name"])) } }
                                    td { (text(&p["in"])) }
                                    td { code { (type_name(&p["schema"])) } }
                                    td { @if p["required"].as_bool() == Some(true) { "yes" } @else { "no" } }
                                    td { (inline_code(&text(&p["description"]))) }
                                }
                            }
                        }
                    } }
                }
                @if has_body {
                    h3 { "Request body " span.muted { "(application/json)" } }
                    (schema_table(doc, &body_schema))
                }
                h3 { "Responses" }
                div.table-wrap { table {
                    thead { tr { th { "Status" } th { "Description" } th { "Body" } } }
                    tbody {
                        @for (status, r) in &responses {
                            @let r = resolve(doc, r);
                            @let content = r["content"].as_object();
                            tr {
                                td { code { (status) } }
                                td { (inline_code(&text(&r["description"]))) }
                                td {
                                    @if let Some(content) = content {
                                        @for (ct, c) in content {
                                            code { (ct) } " " span.muted { (type_name(&c["schema"])) } br;
                                        }
                                    } @else { span.muted { "empty" } }
                                }
                            }
                        }
                    }
                } }
                @let ok_schema = responses.iter().find(|(s, _)| s.starts_with('2')).map(|(_, r)| resolve(doc, r)["content"]["application/json"]["schema"].clone());
                @if let Some(schema) = ok_schema.filter(|s| !s.is_null()) {
                    h3 { "Success body fields" }
                    (schema_table(doc, &schema))
                }
                h3 { "Example" }
                div.secret-box {
                    pre id=(curl_id) { code { (curl(doc, o, origin, &body_schema)) } }
                    (copy_button(&curl_id, "Copy curl"))
                }
            }
        }
    }
}

fn resolve<'a>(doc: &'a Value, v: &'a Value) -> &'a Value {
    match v["$ref"].as_str().and_then(|r| r.strip_prefix("#/components/")) {
        Some(rest) => {
            let mut parts = rest.splitn(2, '/');
            let (kind, name) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
            &doc["components"][kind][name]
        }
        None => v,
    }
}

fn ref_name(v: &Value) -> Option<&str> {
    v["$ref"].as_str().and_then(|r| r.rsplit('/').next())
}

/// A short type for people: `string (date-time)`, `array of Channel`, `integer | null`.
fn type_name(v: &Value) -> String {
    if let Some(name) = ref_name(v) {
        return name.to_owned();
    }
    for key in ["oneOf", "anyOf", "allOf"] {
        if let Some(list) = v[key].as_array() {
            let names: Vec<String> = list.iter().map(type_name).collect();
            return names.join(if key == "allOf" { " & " } else { " | " });
        }
    }
    let base = match &v["type"] {
        Value::String(t) => t.clone(),
        Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(" | "),
        _ => "any".to_owned(),
    };
    let base = if base.starts_with("array") { format!("array of {}", type_name(&v["items"])) } else { base };
    let mut out = base;
    if let Some(f) = v["format"].as_str() {
        out = format!("{out} ({f})");
    }
    if let Some(e) = v["enum"].as_array() {
        let vals: Vec<String> = e.iter().map(|x| x.as_str().map_or_else(|| x.to_string(), str::to_owned)).collect();
        out = format!("{out}: {}", vals.join(", "));
    }
    out
}

fn schema_table(doc: &Value, schema: &Value) -> Markup {
    let s = resolve(doc, schema);
    let required: Vec<&str> =
        s["required"].as_array().map(|a| a.iter().filter_map(Value::as_str).collect()).unwrap_or_default();
    match s["properties"].as_object() {
        Some(props) => html! {
            p.muted { (ref_name(schema).unwrap_or("object")) }
            div.table-wrap { table {
                thead { tr { th { "Field" } th { "Type" } th { "Required" } th { "Description" } } }
                tbody {
                    @for (name, p) in props {
                        tr {
                            td { code { (name) } }
                            td { code { (type_name(p)) } }
                            td { @if required.contains(&name.as_str()) { "yes" } @else { "no" } }
                            td { (inline_code(&text(&resolve(doc, p)["description"]))) }
                        }
                    }
                }
            } }
        },
        None => html! { p { code { (type_name(schema)) } } },
    }
}

/// An example value of a schema: its own example when it has one, else a placeholder of its type.
fn example(doc: &Value, schema: &Value, depth: u8) -> Value {
    let s = resolve(doc, schema);
    if let Some(e) = s.get("example") {
        return e.clone();
    }
    if depth > 4 {
        return Value::Null;
    }
    for key in ["oneOf", "anyOf", "allOf"] {
        if let Some(first) = s[key].as_array().and_then(|a| a.iter().find(|x| x["type"] != "null")) {
            return example(doc, first, depth + 1);
        }
    }
    let t = match &s["type"] {
        Value::String(t) => t.clone(),
        Value::Array(ts) => ts.iter().filter_map(Value::as_str).find(|t| *t != "null").unwrap_or("null").to_owned(),
        _ => String::new(),
    };
    match t.as_str() {
        "object" => {
            let required: Vec<&str> =
                s["required"].as_array().map(|a| a.iter().filter_map(Value::as_str).collect()).unwrap_or_default();
            let mut m = Map::new();
            if let Some(props) = s["properties"].as_object() {
                for (k, p) in props {
                    if required.is_empty() || required.contains(&k.as_str()) {
                        m.insert(k.clone(), example(doc, p, depth + 1));
                    }
                }
            }
            Value::Object(m)
        }
        "array" => json!([example(doc, &s["items"], depth + 1)]),
        "integer" | "number" => json!(1),
        "boolean" => json!(true),
        "string" => match (s["enum"].as_array().and_then(|e| e.first()), s["format"].as_str()) {
            (Some(first), _) => first.clone(),
            (None, Some("date-time")) => json!("2027-01-31T00:00:00Z"),
            _ => json!("string"),
        },
        _ => Value::Null,
    }
}

fn curl(doc: &Value, o: &Op<'_>, origin: &str, body: &Value) -> String {
    let mut path = o.path.to_owned();
    let mut query = Vec::new();
    for p in o.op["parameters"].as_array().into_iter().flatten() {
        let name = text(&p["name"]);
        let value = match example(doc, &p["schema"], 0) {
            Value::String(s) => s,
            v => v.to_string(),
        };
        match p["in"].as_str() {
            Some("path") => path = path.replace(&format!("{{{name}}}"), &value),
            Some("query") if p["required"].as_bool() == Some(true) => query.push(format!("{name}={value}")),
            _ => {}
        }
    }
    let url = if query.is_empty() { format!("{origin}{path}") } else { format!("{origin}{path}?{}", query.join("&")) };
    let mut lines = vec![format!("curl -X {} '{url}'", o.method.to_uppercase())];
    if !is_public(o) {
        lines.push("  -H \"Authorization: Bearer $WMS_API_KEY\"".to_owned());
    }
    if !body.is_null() {
        let json = serde_json::to_string(&example(doc, body, 0)).unwrap_or_default().replace('\'', "'\\''");
        lines.push("  -H 'Content-Type: application/json'".to_owned());
        lines.push(format!("  -d '{json}'"));
    }
    lines.join(" \\\n")
}

//! The OpenAPI 3.1 document of `/v1`, generated from the handlers' annotations so it cannot drift
//! from the code, and served at `GET /v1/openapi.json`.

use actix_web::HttpResponse;
use utoipa::openapi::header::HeaderBuilder;
use utoipa::openapi::path::Operation;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::openapi::{ContentBuilder, Ref, RefOr, ResponseBuilder};
use utoipa::{Modify, OpenApi};

use crate::handlers::{channels, messages, users, webhooks};

pub mod precision;

/// The `/v1` API.
#[derive(OpenApi)]
#[openapi(
    info(
        title = "wms REST API",
        version = "1",
        description = "The Workspace Messaging Service REST API. The base URL ends in `/v1`. Authenticate with \
                       `Authorization: Bearer <API key>` (keys are created on the API Keys settings page, Advanced \
                       plan; a key may be restricted to scopes, see docs/access.md). Each key may make 1000 requests per rolling hour; every authenticated response carries \
                       `RateLimit-Policy`, `RateLimit` and `X-RateLimit-*` headers, and a 429 carries `Retry-After`. \
                       Errors are RFC 9457 `application/problem+json` with a stable `code`."
    ),
    paths(
        openapi_json,
        crate::handlers::login_tokens::login::login,
        crate::handlers::login_tokens::logout::logout,
        crate::handlers::login_tokens::password_reset::request,
        crate::handlers::audit_events::list::list,
        channels::list::list,
        channels::create::create,
        channels::get::get,
        channels::update::update,
        messages::list::list,
        messages::create::create,
        messages::get::get,
        crate::handlers::contacts::list::list,
        crate::handlers::contacts::create::create,
        crate::handlers::contacts::get::get,
        crate::handlers::contacts::update::update,
        crate::handlers::contacts::delete::delete,
        crate::handlers::threads::list::list,
        crate::handlers::threads::get::get,
        crate::handlers::threads::update::update,
        crate::handlers::threads::labels::set,
        crate::handlers::labels::list::list,
        crate::handlers::labels::create::create,
        crate::handlers::labels::update::update,
        crate::handlers::labels::delete::delete,
        crate::handlers::sla_policies::list::list,
        crate::handlers::sla_policies::create::create,
        crate::handlers::sla_policies::update::update,
        crate::handlers::sla_policies::delete::delete,
        crate::handlers::teams::list::list,
        crate::handlers::teams::create::create,
        crate::handlers::teams::get::get,
        crate::handlers::teams::update::update,
        crate::handlers::teams::delete::delete,
        crate::handlers::ai_agents::list::list,
        crate::handlers::business_hours::get::get,
        crate::handlers::business_hours::put::put,
        crate::handlers::reports::conversations::get,
        crate::handlers::reports::conversations_csv::get,
        crate::handlers::ai_agents::get::get,
        users::list::list,
        users::create::create,
        users::get::get,
        users::update::update,
        users::delete::delete,
        webhooks::list::list,
        webhooks::create::create,
        webhooks::get::get,
        webhooks::update::update,
        webhooks::delete::delete,
        webhooks::secret::reveal,
        webhooks::rotate::rotate,
        webhooks::deliveries::list,
        webhooks::stats::stats,
        webhooks::retry::retry,
        webhooks::test::send,
        webhooks::replay::replay,
        crate::handlers::events::list::list,
        crate::handlers::events::types::list,
        crate::handlers::channels::templates::list,
        crate::handlers::channels::templates::sync,
    ),
    components(schemas(
        crate::error::Problem,
        crate::error::FieldErrorSchema,
        crate::handlers::threads::list::AssigneeTypeDto,
        // `data` of the events (the OpenAPI `webhooks`), also when no operation answers them.
        crate::dto::MessageRecord,
        crate::dto::ThreadRecord,
        crate::dto::ChannelRecord,
        domain::contacts::Contact,
        domain::contacts::ErasedContact,
        crate::dto::WebhookRecord,
        domain::connectors::templates::TemplateEventRecord,
        domain::connectors::templates::TemplateRecord,
        domain::threads::ServiceWindowRecord,
        domain::sla::ThreadSlaRecord,
    )),
    modifiers(&BearerAuth, &StandardResponses),
    security(("bearer" = [])),
    tags(
        (name = "auth", description = "Sign in for a user token, sign out"),
        (name = "audit", description = "The workspace's audit log: who did what, from where"),
        (name = "channels", description = "WhatsApp, Messenger and Instagram channels"),
        (name = "messages", description = "Messages: list and send"),
        (name = "contacts", description = "The people the workspace talks to: list, create, change, erase"),
        (name = "threads", description = "Conversations: list, status, assignment and labels"),
        (name = "labels", description = "Labels that threads carry"),
        (name = "sla_policies", description = "SLA policies: response and resolution targets with due times on threads"),
        (name = "teams", description = "Teams of members that threads can be assigned to"),
        (name = "ai_agents", description = "AI agents that threads can be assigned to (read-only)"),
        (name = "business_hours", description = "The hours in which reports and SLA targets count time"),
        (name = "reports", description = "Conversation reports: response, reply and resolution times"),
        (name = "users", description = "Members of the workspace"),
        (name = "webhooks", description = "Outbound webhook destinations, their secrets and delivery logs"),
        (name = "events", description = "The workspace's events feed and the event catalogue"),
        (name = "meta", description = "This document"),
    )
)]
pub struct ApiDoc;

/// This document.
#[utoipa::path(
    get,
    operation_id = "get_openapi_document",
    path = "/v1/openapi.json",
    tag = "meta",
    security(()),
    responses((status = 200, description = "The OpenAPI 3.1 document of /v1", content_type = "application/json"))
)]
pub async fn openapi_json() -> HttpResponse {
    HttpResponse::Ok().json(document())
}

/// The document with the rules the derive macros cannot state ([`precision`]) and its top-level
/// `webhooks` (OpenAPI 3.1; utoipa has no model for it): one entry per event type with its payload
/// schema (`crate::event_catalog`).
pub fn document() -> serde_json::Value {
    static DOC: std::sync::OnceLock<serde_json::Value> = std::sync::OnceLock::new();
    DOC.get_or_init(|| {
        let mut doc = serde_json::to_value(ApiDoc::openapi()).unwrap_or_default();
        precision::apply(&mut doc);
        if let Some(map) = doc.as_object_mut() {
            map.insert("webhooks".to_owned(), crate::event_catalog::webhooks_object());
        }
        doc
    })
    .clone()
}

struct BearerAuth;

impl Modify for BearerAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .bearer_format("wmsk_… API key or wmsu_… user token")
                    .description(Some("`Authorization: Bearer <token>`; the scheme word is case-insensitive"))
                    .build(),
            ),
        );
    }
}

/// Adds to every operation the problem responses any request can get, and to every response of
/// an authenticated operation the rate-limit headers.
struct StandardResponses;

const AUTHENTICATED: [(&str, &str); 6] = [
    ("401", "Missing, malformed, unknown, revoked or expired credentials (`unauthenticated`, `invalid_token`, `token_revoked`, `token_expired`)"),
    ("403", "The workspace's plan does not include the REST API (`plan_required`), the API key lacks the scope the operation needs (`insufficient_scope`, with `WWW-Authenticate` naming it), or the member's role does not allow it (`forbidden`); see docs/access.md"),
    ("404", "No such resource in this workspace (`not_found`)"),
    ("422", "Invalid parameters or body (`validation_failed`), one entry per field in `errors`"),
    ("429", "Rate limit exceeded (`rate_limited`); see `Retry-After`"),
    ("503", "The database is unavailable (`service_unavailable`)"),
];

const WITH_BODY: [(&str, &str); 3] = [
    ("400", "The body is not valid JSON (`bad_request`)"),
    ("413", "The body is larger than 256 KiB (`payload_too_large`)"),
    ("415", "The body is not `application/json` (`unsupported_media_type`)"),
];

const RATE_LIMIT_HEADERS: [(&str, &str); 5] = [
    ("RateLimit-Policy", "`\"hourly\";q=1000;w=3600`"),
    ("RateLimit", "`\"hourly\";r=<remaining>;t=<seconds until a request is freed>`"),
    ("X-RateLimit-Limit", "Requests allowed per hour"),
    ("X-RateLimit-Remaining", "Requests left in the current window"),
    ("X-RateLimit-Reset", "Epoch seconds when a request is freed"),
];

fn problem_response(description: &str) -> RefOr<utoipa::openapi::Response> {
    RefOr::T(
        ResponseBuilder::new()
            .description(description)
            .content(
                "application/problem+json",
                ContentBuilder::new().schema(Some(Ref::from_schema_name("Problem"))).build(),
            )
            .build(),
    )
}

fn operations(item: &mut utoipa::openapi::PathItem) -> impl Iterator<Item = &mut Operation> {
    [&mut item.get, &mut item.put, &mut item.post, &mut item.delete, &mut item.patch].into_iter().flatten()
}

/// Operation ids must be unique in a document; utoipa defaults them to the handler's function name
/// (`list`, `create`), so an id used twice is replaced by one derived from method and path
/// (`get /v1/webhooks/{webhook_id}/deliveries` → `get_webhooks_webhook_id_deliveries`).
fn unique_operation_ids(openapi: &mut utoipa::openapi::OpenApi) {
    let mut seen = std::collections::HashMap::<String, usize>::new();
    for item in openapi.paths.paths.values_mut() {
        for op in operations(item) {
            if let Some(id) = &op.operation_id {
                *seen.entry(id.clone()).or_default() += 1;
            }
        }
    }
    for (path, item) in openapi.paths.paths.iter_mut() {
        let methods = ["get", "put", "post", "delete", "patch"];
        let ops = [&mut item.get, &mut item.put, &mut item.post, &mut item.delete, &mut item.patch];
        for (method, op) in methods.into_iter().zip(ops) {
            let Some(op) = op else { continue };
            let duplicate = op.operation_id.as_ref().is_none_or(|id| seen.get(id).copied().unwrap_or(0) > 1);
            if duplicate {
                let words: Vec<&str> = path
                    .split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
                    .filter(|w| !w.is_empty() && *w != "v1")
                    .collect();
                op.operation_id = Some(format!("{method}_{}", words.join("_")));
            }
        }
    }
}

impl Modify for StandardResponses {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        unique_operation_ids(openapi);
        for item in openapi.paths.paths.values_mut() {
            for op in operations(item) {
                // `security(())` marks a public operation: no credentials, no rate-limit headers.
                let public = op.security.as_ref().is_some_and(|s| {
                    s.iter().all(|r| serde_json::to_value(r).map(|v| v == serde_json::json!({})).unwrap_or(false))
                });
                let has_body = op.request_body.is_some();
                if public {
                    // A body is read (and refused) the same way with or without credentials.
                    for (status, description) in if has_body { WITH_BODY.iter() } else { [].iter() } {
                        op.responses
                            .responses
                            .entry((*status).to_owned())
                            .or_insert_with(|| problem_response(description));
                    }
                    continue;
                }
                for (status, description) in
                    AUTHENTICATED.iter().chain(if has_body { WITH_BODY.iter() } else { [].iter() })
                {
                    op.responses.responses.entry((*status).to_owned()).or_insert_with(|| problem_response(description));
                }
                for (status, response) in op.responses.responses.iter_mut() {
                    let RefOr::T(response) = response else { continue };
                    if status == "401" {
                        continue;
                    }
                    for (name, description) in RATE_LIMIT_HEADERS {
                        response.headers.entry(name.to_owned()).or_insert_with(|| {
                            HeaderBuilder::new().description(Some(description)).schema(String::schema_ref()).build()
                        });
                    }
                    if status == "429" {
                        response.headers.entry("Retry-After".to_owned()).or_insert_with(|| {
                            HeaderBuilder::new()
                                .description(Some("Seconds to wait before retrying"))
                                .schema(String::schema_ref())
                                .build()
                        });
                    }
                }
            }
        }
    }
}

trait SchemaRef {
    fn schema_ref() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema>;
}

impl SchemaRef for String {
    fn schema_ref() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        RefOr::T(utoipa::openapi::schema::Object::with_type(utoipa::openapi::schema::Type::String).into())
    }
}

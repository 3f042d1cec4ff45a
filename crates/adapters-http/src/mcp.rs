//! The Model Context Protocol server of the assistant's tools: JSON-RPC 2.0 messages of the
//! streamable HTTP transport, answered with plain JSON (never an SSE stream) and without sessions.
//! The tools, their schemas and their results come from the domain's one registry, so MCP shows
//! exactly what the execute endpoint and the capabilities manifest show. Every documentation page
//! is a resource (`wms://docs/<slug>`, its Markdown), the same page `/docs/<slug>` shows.

use domain::access::Caller;
use domain::assistant::{guidance_prompt, output_schema, Assistant, ToolError, ToolName, TOOLS};
use serde_json::{json, Value};

/// The protocol revisions served (2025-03-26 is the first with the streamable HTTP transport).
pub const PROTOCOL_VERSIONS: &[&str] = &["2025-03-26", "2025-06-18", "2025-11-25"];
/// Offered to a client that asks for a revision not in [`PROTOCOL_VERSIONS`].
pub const LATEST_PROTOCOL_VERSION: &str = "2025-11-25";

const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;
const METHOD_NOT_FOUND: i64 = -32601;
const INVALID_PARAMS: i64 = -32602;
/// MCP's code for a resource URI that names nothing.
const RESOURCE_NOT_FOUND: i64 = -32002;

/// `docs/contract.md`, "Abuse limits": one POST may carry at most this many requests (messages
/// with an `id`, which are answered), so a single request cannot make the server run thousands of
/// tool calls.
pub const MAX_BATCH: usize = 20;
/// And at most this many messages in all, notifications included (each costs a little).
pub const MAX_BATCH_MESSAGES: usize = 100;
/// The scheme and prefix of the documentation resources.
pub const DOCS_URI_PREFIX: &str = "wms://docs/";

/// What to send back for one HTTP POST.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// 200 with this JSON body (a response, or an array of responses for a batch).
    Json(Value),
    /// 202 with no body: the POST held only notifications or responses.
    Accepted,
    /// 400 with this JSON-RPC error body: the POST was not JSON-RPC at all.
    BadRequest(Value),
}

/// Whether `version` (an `MCP-Protocol-Version` header) is served.
pub fn supports(version: &str) -> bool {
    PROTOCOL_VERSIONS.contains(&version)
}

/// Answers the JSON-RPC message (or batch) in `body` for `caller`'s workspace.
pub async fn handle(assistant: &Assistant, caller: &Caller, body: &[u8]) -> Reply {
    let message: Value = match serde_json::from_slice(body) {
        Ok(v) => v,
        Err(e) => return Reply::BadRequest(error(Value::Null, PARSE_ERROR, &format!("parse error: {e}"))),
    };
    match message {
        // Batches were part of 2025-03-26; later revisions send one message per POST.
        Value::Array(items)
            if items.len() > MAX_BATCH_MESSAGES
                || items.iter().filter(|m| m.get("id").is_some()).count() > MAX_BATCH =>
        {
            Reply::Json(error(
                Value::Null,
                INVALID_REQUEST,
                &format!(
                    "a batch may hold at most {MAX_BATCH} requests and {MAX_BATCH_MESSAGES} messages in all; this one \
                     has {} requests among {} messages",
                    items.iter().filter(|m| m.get("id").is_some()).count(),
                    items.len()
                ),
            ))
        }
        Value::Array(items) if !items.is_empty() => {
            let mut out = Vec::new();
            for item in items {
                if let Some(r) = one(assistant, caller, item).await {
                    out.push(r);
                }
            }
            if out.is_empty() {
                Reply::Accepted
            } else {
                Reply::Json(Value::Array(out))
            }
        }
        // A lone message the server cannot accept is an HTTP error (the transport's rule), its
        // body the JSON-RPC error; in a batch each item's error is its answer.
        Value::Object(_) => match one(assistant, caller, message).await {
            Some(r) if r["error"]["code"] == INVALID_REQUEST => Reply::BadRequest(r),
            Some(r) => Reply::Json(r),
            None => Reply::Accepted,
        },
        _ => Reply::BadRequest(error(Value::Null, INVALID_REQUEST, "expected a JSON-RPC 2.0 message")),
    }
}

/// The response to one message; `None` for notifications and for responses to us.
async fn one(assistant: &Assistant, caller: &Caller, m: Value) -> Option<Value> {
    let id = m.get("id").cloned();
    let Some(method) = m.get("method").and_then(Value::as_str) else {
        // A response to a server request (we send none) or garbage; only requests get answers.
        return match (&id, m.get("result").or_else(|| m.get("error"))) {
            (Some(_), Some(_)) => None,
            _ => Some(error(id.unwrap_or(Value::Null), INVALID_REQUEST, "expected a JSON-RPC 2.0 request")),
        };
    };
    // Notifications (`notifications/initialized`, `notifications/cancelled`, …) need no answer.
    let id = id?;
    let id_ok = id.is_string() || id.is_i64() || id.is_u64();
    if m.get("jsonrpc").and_then(Value::as_str) != Some("2.0") || !id_ok {
        // JSON-RPC 2.0, section 5: an id that cannot be read is answered as null.
        let id = if id_ok { id } else { Value::Null };
        return Some(error(id, INVALID_REQUEST, "expected jsonrpc \"2.0\" and a string or integer id"));
    }
    let params = m.get("params").cloned().unwrap_or(Value::Null);
    Some(match method {
        "initialize" => result(id, initialize(&params)),
        "ping" => result(id, json!({})),
        "tools/list" => result(id, json!({ "tools": tools(assistant.settings().compress_overview) })),
        "resources/list" => result(id, json!({ "resources": resources(assistant) })),
        "resources/templates/list" => result(id, json!({ "resourceTemplates": [] })),
        "resources/read" => match read_resource(assistant, &params) {
            Ok(r) => result(id, r),
            Err((code, message)) => error(id, code, &message),
        },
        "tools/call" => match call(assistant, caller, &params).await {
            Ok(r) => result(id, r),
            Err(message) => error(id, INVALID_PARAMS, &message),
        },
        other => error(id, METHOD_NOT_FOUND, &format!("method not found: {other}")),
    })
}

fn initialize(params: &Value) -> Value {
    let asked = params.get("protocolVersion").and_then(Value::as_str).unwrap_or(LATEST_PROTOCOL_VERSION);
    let version = if supports(asked) { asked } else { LATEST_PROTOCOL_VERSION };
    json!({
        "protocolVersion": version,
        "capabilities": {
            "tools": { "listChanged": false },
            "resources": { "subscribe": false, "listChanged": false },
        },
        "serverInfo": {
            "name": "wms",
            "title": "wms workspace assistant",
            "version": env!("CARGO_PKG_VERSION"),
        },
        "instructions": guidance_prompt(),
    })
}

/// `tools/list`: every tool of the registry, annotated as safe to run without confirmation, with
/// the JSON Schema of its `structuredContent`.
pub fn tools(compressed_overview: bool) -> Vec<Value> {
    TOOLS
        .iter()
        .map(|t| {
            json!({
                "name": t.name,
                "title": t.title,
                "description": t.description,
                "inputSchema": t.input_schema(),
                "outputSchema": output_schema(t.tool, compressed_overview),
                "annotations": {
                    "title": t.title,
                    "readOnlyHint": true,
                    "destructiveHint": false,
                    "idempotentHint": true,
                    "openWorldHint": false,
                },
            })
        })
        .collect()
}

/// `tools/call`. An unknown tool or malformed params are protocol errors; everything the tool
/// itself refuses (an invalid argument, an unknown channel) is a result with `isError: true`, so
/// the model sees the message and can correct the call.
async fn call(assistant: &Assistant, caller: &Caller, params: &Value) -> Result<Value, String> {
    let name = params.get("name").and_then(Value::as_str).ok_or("tools/call needs params.name")?;
    if ToolName::parse(name).is_none() {
        return Err(format!("unknown tool: {name}"));
    }
    let arguments = params.get("arguments").cloned().unwrap_or(Value::Null);
    Ok(match assistant.execute_as(caller, name, &arguments).await {
        Ok(value) => json!({
            "content": [{ "type": "text", "text": value.to_string() }],
            "structuredContent": value,
            "isError": false,
        }),
        Err(e) => {
            let text = match &e {
                ToolError::Invalid(v) => format!("Invalid arguments for {name}: {v}"),
                ToolError::Denied(d) => format!("{name} is not allowed for this caller: {d}"),
                ToolError::Unavailable(m) => format!("{name} is unavailable: {m}"),
                ToolError::Unknown(cause) => {
                    tracing::error!(error = format!("{:#}", cause.0), tool = name, "MCP tool call failed");
                    format!("{name} failed because of an internal error; try again later")
                }
            };
            json!({ "content": [{ "type": "text", "text": text }], "isError": true })
        }
    })
}

/// `resources/list`: every documentation page. There are about fifty, so there is no cursor.
fn resources(assistant: &Assistant) -> Vec<Value> {
    assistant
        .library()
        .pages()
        .map(|p| {
            json!({
                "uri": format!("{DOCS_URI_PREFIX}{}", p.meta.slug),
                "name": p.meta.slug,
                "title": p.meta.title,
                "description": format!("{} ({}); read in the app at {}", p.meta.title, p.meta.category,
                    domain::docs::page_url(&p.meta.slug, None)),
                "mimeType": "text/markdown",
                "size": p.markdown.len(),
            })
        })
        .collect()
}

/// `resources/read`: the page's Markdown, as the search indexes it.
fn read_resource(assistant: &Assistant, params: &Value) -> Result<Value, (i64, String)> {
    let uri =
        params.get("uri").and_then(Value::as_str).ok_or((INVALID_PARAMS, "resources/read needs params.uri".into()))?;
    let page = uri
        .strip_prefix(DOCS_URI_PREFIX)
        .and_then(|slug| assistant.library().get(slug))
        .ok_or_else(|| (RESOURCE_NOT_FOUND, format!("resource not found: {uri}")))?;
    Ok(json!({ "contents": [{ "uri": uri, "mimeType": "text/markdown", "text": page.markdown.trim_start() }] }))
}

fn result(id: Value, result: Value) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "result": result })
}

fn error(id: Value, code: i64, message: &str) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } })
}

#[cfg(test)]
mod tests {
    fn test_caller() -> domain::access::Caller {
        domain::access::Caller {
            workspace_id: domain::workspace::WorkspaceId(1),
            plan: domain::workspace::PlanTier::Advanced,
            actor: domain::access::Actor::Member {
                user_id: domain::users::UserId(1),
                role: domain::users::Role::Admin,
            },
            surface: domain::access::Surface::Assistant,
        }
    }

    use std::sync::Arc;

    use domain::assistant::{AssistantSettings, MockLiveData};
    use domain::common::ports::MockClock;

    use super::*;

    fn assistant(data: MockLiveData) -> Assistant {
        let mut clock = MockClock::new();
        clock.expect_now().return_const(time::OffsetDateTime::UNIX_EPOCH);
        let page = domain::docs::SourcePage {
            path: "a.md".into(),
            bytes: b"---\nslug: webhooks-setup\ntitle: Set up\ncategory: webhooks\n---\n# Set up\n\nText.\n".to_vec(),
        };
        Assistant::new(Arc::new(data), Arc::new(clock), AssistantSettings::default())
            .with_library(Arc::new(domain::docs::DocsLibrary::from_sources(&[page]).0))
    }

    async fn send(m: Value) -> Reply {
        handle(&assistant(MockLiveData::new()), &test_caller(), m.to_string().as_bytes()).await
    }

    #[tokio::test]
    async fn initialize_negotiates_the_version() {
        let r = send(
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18"}}),
        )
        .await;
        let Reply::Json(v) = r else { panic!("{r:?}") };
        assert_eq!(v["result"]["protocolVersion"], "2025-06-18");
        assert_eq!(v["result"]["capabilities"]["tools"]["listChanged"], false);
        let r = send(
            json!({"jsonrpc": "2.0", "id": "a", "method": "initialize", "params": {"protocolVersion": "2099-01-01"}}),
        )
        .await;
        let Reply::Json(v) = r else { panic!("{r:?}") };
        assert_eq!(
            (v["id"].as_str(), v["result"]["protocolVersion"].as_str()),
            (Some("a"), Some(LATEST_PROTOCOL_VERSION))
        );
    }

    #[tokio::test]
    async fn notifications_are_accepted_without_a_body() {
        assert_eq!(send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await, Reply::Accepted);
    }

    #[tokio::test]
    async fn tools_are_listed_with_safe_annotations() {
        let Reply::Json(v) = send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})).await else { panic!() };
        let tools = v["result"]["tools"].as_array().cloned().unwrap_or_default();
        assert_eq!(tools.len(), 7);
        for t in tools {
            assert_eq!(t["annotations"]["readOnlyHint"], true);
            assert_eq!(t["annotations"]["destructiveHint"], false);
            assert_eq!(t["inputSchema"]["type"], "object");
            assert_eq!(t["outputSchema"]["type"], "object");
        }
    }

    #[tokio::test]
    async fn docs_pages_are_resources() {
        let Reply::Json(v) = send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize"})).await else { panic!() };
        assert_eq!(v["result"]["capabilities"]["resources"]["listChanged"], false);
        let Reply::Json(v) = send(json!({"jsonrpc": "2.0", "id": 2, "method": "resources/list"})).await else {
            panic!()
        };
        assert_eq!(v["result"]["resources"][0]["uri"], "wms://docs/webhooks-setup");
        assert_eq!(v["result"]["resources"][0]["mimeType"], "text/markdown");
        let Reply::Json(v) = send(json!({"jsonrpc": "2.0", "id": 3, "method": "resources/read",
            "params": {"uri": "wms://docs/webhooks-setup"}}))
        .await
        else {
            panic!()
        };
        assert_eq!(v["result"]["contents"][0]["text"], "# Set up\n\nText.\n");
        let Reply::Json(v) = send(json!({"jsonrpc": "2.0", "id": 4, "method": "resources/read",
            "params": {"uri": "wms://docs/nope"}}))
        .await
        else {
            panic!()
        };
        assert_eq!(v["error"]["code"], RESOURCE_NOT_FOUND);
    }

    #[tokio::test]
    async fn batches_above_the_limit_are_refused_whole() {
        let ping = |i: usize| json!({"jsonrpc": "2.0", "id": i, "method": "ping"});
        let Reply::Json(v) = send(Value::Array((0..MAX_BATCH).map(ping).collect())).await else { panic!() };
        assert_eq!(v.as_array().map(Vec::len), Some(MAX_BATCH));
        // Notifications are not requests: 20 requests and a notification are answered.
        let mut with_note: Vec<Value> = (0..MAX_BATCH).map(ping).collect();
        with_note.push(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        let Reply::Json(v) = send(Value::Array(with_note)).await else { panic!() };
        assert_eq!(v.as_array().map(Vec::len), Some(MAX_BATCH));
        let notes: Vec<Value> = (0..=MAX_BATCH_MESSAGES)
            .map(|_| json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .collect();
        let Reply::Json(v) = send(Value::Array(notes)).await else { panic!() };
        assert_eq!(v["error"]["code"], INVALID_REQUEST, "too many messages in all");
        let Reply::Json(v) = send(Value::Array((0..=MAX_BATCH).map(ping).collect())).await else { panic!() };
        assert_eq!(v["jsonrpc"], "2.0");
        assert_eq!(v["id"], Value::Null);
        assert_eq!(v["error"]["code"], INVALID_REQUEST);
        assert!(v["error"]["message"].is_string());
    }

    #[tokio::test]
    async fn invalid_arguments_are_a_tool_error_and_unknown_tools_a_protocol_error() {
        let Reply::Json(v) = send(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
            "params": {"name": "get_channel_analytics", "arguments": {"range": "365d"}}}))
        .await
        else {
            panic!()
        };
        assert_eq!(v["result"]["isError"], true);
        assert!(v["result"]["content"][0]["text"].as_str().unwrap_or_default().contains("range"));
        let Reply::Json(v) = send(json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
            "params": {"name": "drop_tables"}}))
        .await
        else {
            panic!()
        };
        assert_eq!(v["error"]["code"], INVALID_PARAMS);
    }

    #[tokio::test]
    async fn garbage_and_unknown_methods() {
        let r = handle(&assistant(MockLiveData::new()), &test_caller(), b"{not json").await;
        assert!(matches!(r, Reply::BadRequest(ref v) if v["error"]["code"] == PARSE_ERROR), "{r:?}");
        let Reply::Json(v) = send(json!({"jsonrpc": "2.0", "id": 5, "method": "prompts/list"})).await else { panic!() };
        assert_eq!(v["error"]["code"], METHOD_NOT_FOUND);
        let Reply::Json(v) = send(json!({"jsonrpc": "2.0", "id": 6, "method": "ping"})).await else { panic!() };
        assert_eq!(v["result"], json!({}));
    }
}

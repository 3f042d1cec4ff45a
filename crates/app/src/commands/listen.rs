//! `wms listen`: follows `GET /v1/events` with an API key and POSTs each event to a local URL,
//! signed per Standard Webhooks with a secret of its own (printed at start), like Stripe's
//! `listen --forward-to`. The cursor, the ids already forwarded from the current page and the
//! secret live in a state file, so a restart resumes where the last run stopped, without losing
//! or repeating an event, and the local endpoint keeps its secret.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context;
use domain::webhooks::signing::SigningSecret;
use domain::webhooks::EventType;
use serde::{Deserialize, Serialize};

use crate::cli::{from_command_line, ListenArgs, API_KEY_ENV};
use crate::CommandError;

/// What survives a restart.
#[derive(Debug, Default, Serialize, Deserialize)]
struct State {
    /// Resume the feed after this cursor (`None`: from the start of the feed).
    cursor: Option<String>,
    /// Events of the page after `cursor` that were already forwarded.
    forwarded: Vec<String>,
    /// The signing secret the local endpoint verifies with.
    secret: Option<String>,
}

impl State {
    fn load(path: &Path) -> anyhow::Result<Self> {
        match std::fs::read(path) {
            Ok(bytes) => serde_json::from_slice(&bytes).with_context(|| format!("reading {}", path.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Self::default()),
            Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
        }
    }

    /// Written to a temporary file and renamed over the old one: a kill never leaves half a file.
    fn save(&self, path: &Path) -> anyhow::Result<()> {
        let tmp = path.with_extension("tmp");
        std::fs::write(&tmp, serde_json::to_vec(self)?).with_context(|| format!("writing {}", tmp.display()))?;
        std::fs::rename(&tmp, path).with_context(|| format!("writing {}", path.display()))
    }
}

/// A page of `GET /v1/events`.
#[derive(Debug, Deserialize)]
struct FeedPage {
    /// Each record as the server wrote it: its bytes after the id are what a destination receives.
    data: Vec<Box<serde_json::value::RawValue>>,
    next_cursor: String,
}

/// The body a destination receives for a feed `record` (`{"id", …}`, the delivered body with the id
/// in front): the same bytes without the id, so a local endpoint sees exactly what a destination
/// would (members in the same order, nothing re-serialised). A record not in that shape is
/// re-serialised without its `id`.
fn delivered_body(record: &str, id: &str) -> String {
    let head = format!("{{\"id\":{}", serde_json::Value::from(id));
    match record.strip_prefix(head.as_str()) {
        Some(rest) => format!("{{{}", rest.strip_prefix(',').unwrap_or(rest)),
        None => {
            let mut value: serde_json::Value = serde_json::from_str(record).unwrap_or_default();
            if let Some(map) = value.as_object_mut() {
                map.remove("id");
            }
            value.to_string()
        }
    }
}

fn usage(message: impl Into<String>) -> CommandError {
    CommandError::Usage(message.into())
}

/// `https://host` or `https://host/v1` → `https://host/v1`.
fn api_base(raw: &str) -> Result<reqwest::Url, CommandError> {
    let trimmed = raw.trim_end_matches('/');
    let with_v1 = if trimmed.ends_with("/v1") { trimmed.to_owned() } else { format!("{trimmed}/v1") };
    let url = reqwest::Url::parse(&with_v1).map_err(|e| usage(format!("--api-url `{raw}` is not a URL: {e}")))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(usage(format!("--api-url `{raw}` must be an http or https URL")));
    }
    Ok(url)
}

fn forward_url(raw: &str) -> Result<reqwest::Url, CommandError> {
    let url = reqwest::Url::parse(raw).map_err(|e| usage(format!("--forward-to `{raw}` is not a URL: {e}")))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(usage(format!("--forward-to `{raw}` must be an http or https URL")));
    }
    Ok(url)
}

fn event_filter(raw: &[String]) -> Result<Vec<EventType>, CommandError> {
    raw.iter()
        .map(|s| s.trim())
        .filter(|s| !s.is_empty())
        .map(|s| match s.parse::<EventType>() {
            Ok(e) if e.is_subscribable() => Ok(e),
            _ => Err(usage(format!(
                "--events: `{s}` is not an event type (one of {})",
                EventType::CATALOG.iter().map(|e| e.as_str()).collect::<Vec<_>>().join(", ")
            ))),
        })
        .collect()
}

/// One state file per server and key (by a digest, never the key itself).
fn default_state_file(api: &reqwest::Url, key: &str) -> Result<PathBuf, CommandError> {
    use sha2::{Digest, Sha256};
    let dir = std::env::var_os("XDG_STATE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/state")))
        .ok_or_else(|| usage("no HOME or XDG_STATE_HOME: pass --state-file"))?
        .join("wms");
    let digest = Sha256::digest(format!("{api}\n{key}"));
    let name: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
    Ok(dir.join(format!("listen-{name}.json")))
}

/// Runs until interrupted.
///
/// # Errors
/// [`CommandError::Usage`] for bad arguments (exit 2); [`CommandError::Failed`] when the key is
/// refused or the state file cannot be kept.
pub async fn run(args: ListenArgs) -> Result<(), CommandError> {
    let api = api_base(&args.api_url)?;
    let target = forward_url(&args.forward_to)?;
    let only = event_filter(&args.events)?;
    if !args.key.starts_with("wmsk_") && !args.key.starts_with("wmsu_") {
        return Err(usage(format!("--key ({API_KEY_ENV}) must be a wms API key (wmsk_…)")));
    }
    if from_command_line(&args.key, API_KEY_ENV) {
        eprintln!(
            "warning: --key is visible to every user of this machine in the process list; set {API_KEY_ENV} instead"
        );
    }
    let state_file = match args.state_file {
        Some(p) => p,
        None => default_state_file(&api, &args.key)?,
    };
    if let Some(dir) = state_file.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let mut state = State::load(&state_file)?;
    let secret = match state.secret.as_deref().map(SigningSecret::parse) {
        Some(Ok(s)) => s,
        _ => {
            let s = SigningSecret::generate(&crate::platform::OsRandom);
            state.secret = Some(s.expose().to_owned());
            state.save(&state_file)?;
            s
        }
    };
    println!("Forwarding events of {api} to {target}");
    println!("Signing secret (verify the webhook-signature header with it): {}", secret.expose());
    println!("State: {}", state_file.display());

    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .user_agent(concat!("wms-listen/", env!("CARGO_PKG_VERSION")))
        .build()
        .context("building the HTTP client")?;
    let feed = reqwest::Url::parse(&format!("{}/events", api.as_str().trim_end_matches('/')))
        .map_err(|e| usage(e.to_string()))?;
    let idle = Duration::from_millis(args.poll_interval_ms.max(10));
    loop {
        let mut request = client.get(feed.clone()).bearer_auth(&args.key).query(&[("limit", "100")]);
        if let Some(c) = &state.cursor {
            request = request.query(&[("cursor", c.as_str())]);
        }
        let answer = match request.send().await {
            Ok(a) => a,
            Err(e) => {
                eprintln!("wms listen: cannot reach {feed}: {e}; retrying");
                tokio::time::sleep(idle).await;
                continue;
            }
        };
        let status = answer.status();
        if status.as_u16() == 429 || status.is_server_error() {
            let wait = answer
                .headers()
                .get("retry-after")
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.parse::<u64>().ok())
                .map_or(idle, Duration::from_secs);
            eprintln!("wms listen: the server answered {status}; waiting {}s", wait.as_secs());
            tokio::time::sleep(wait).await;
            continue;
        }
        if !status.is_success() {
            let body = answer.text().await.unwrap_or_default();
            return Err(anyhow::anyhow!("GET {feed} answered {status}: {body}").into());
        }
        let page: FeedPage = answer.json().await.context("reading the events feed")?;
        let full = page.data.len() >= 100;
        for raw in page.data {
            let event: serde_json::Value = serde_json::from_str(raw.get()).unwrap_or_default();
            let id = event.get("id").and_then(|v| v.as_str()).unwrap_or_default().to_owned();
            if state.forwarded.contains(&id) {
                continue;
            }
            let kind = event.get("type").and_then(|v| v.as_str()).unwrap_or_default().to_owned();
            if only.is_empty() || only.iter().any(|t| t.as_str() == kind) {
                forward(&client, &target, &secret, &id, &kind, delivered_body(raw.get(), &id), idle).await;
            }
            state.forwarded.push(id);
            state.save(&state_file)?;
        }
        if page.next_cursor.is_empty() || state.cursor.as_deref() != Some(page.next_cursor.as_str()) {
            state.cursor = Some(page.next_cursor);
            state.forwarded.clear();
            state.save(&state_file)?;
        }
        if !full {
            tokio::time::sleep(idle).await;
        }
    }
}

/// POSTs one event (the body a webhook destination receives) until the local endpoint answers;
/// prints a line with its status. Any answer counts: like a destination's log, a 500 is shown,
/// not retried forever; an endpoint that is not listening yet is waited for.
async fn forward(
    client: &reqwest::Client,
    target: &reqwest::Url,
    secret: &SigningSecret,
    id: &str,
    kind: &str,
    body: String,
    idle: Duration,
) {
    loop {
        let timestamp = time::OffsetDateTime::now_utc().unix_timestamp();
        let signature = secret.sign(id, timestamp, body.as_bytes());
        let sent = client
            .post(target.clone())
            .header("content-type", "application/json")
            .header("webhook-id", id)
            .header("webhook-timestamp", timestamp.to_string())
            .header("webhook-signature", signature)
            .body(body.clone())
            .send()
            .await;
        match sent {
            Ok(answer) => {
                println!("{} {kind} {id} -> {}", rfc3339_now(), answer.status().as_u16());
                return;
            }
            Err(e) => {
                eprintln!("{} {kind} {id} -> not delivered ({e}); retrying", rfc3339_now());
                tokio::time::sleep(idle).await;
            }
        }
    }
}

fn rfc3339_now() -> String {
    time::OffsetDateTime::now_utc().format(&time::format_description::well_known::Rfc3339).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::delivered_body;

    #[test]
    fn the_forwarded_body_is_the_records_bytes_without_the_id() {
        let record = r#"{"id":"msg_1","type":"contact.created","timestamp":"2026-11-28T00:00:00Z","workspace_id":3,"data":{"z":1,"a":2}}"#;
        assert_eq!(
            delivered_body(record, "msg_1"),
            r#"{"type":"contact.created","timestamp":"2026-11-28T00:00:00Z","workspace_id":3,"data":{"z":1,"a":2}}"#,
            "members keep their order"
        );
        assert_eq!(delivered_body(r#"{"id":"m"}"#, "m"), "{}");
        assert_eq!(delivered_body(r#"{"type":"x","id":"m"}"#, "m"), r#"{"type":"x"}"#, "another shape");
    }
}

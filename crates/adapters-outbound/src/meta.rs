//! The platforms' send APIs, all on Meta's Graph API:
//! - WhatsApp Cloud API: `POST {graph}/{version}/{phone_number_id}/messages`, bearer system-user token.
//! - Messenger Send API and Instagram messaging: `POST {graph}/{version}/me/messages`, bearer page token.
//!
//! The base URL is configurable so tests and staging can point at a stand-in.

use std::time::Duration;

use async_trait::async_trait;
use domain::channels::ChannelType;
use domain::connectors::{
    AccountProof, ChannelCredentials, ChannelGateway, GatewayError, OutboundContent, OutboundRequest, ProofError,
};
use serde_json::{json, Value};

/// Graph API error codes that mean "slow down" rather than "this message is wrong".
const RATE_LIMIT_CODES: [i64; 8] = [4, 17, 32, 613, 80007, 130429, 131048, 131056];
/// Graph API error codes for temporary failures on Meta's side.
const TRANSIENT_CODES: [i64; 3] = [1, 2, 131000];

/// [`ChannelGateway`] over Meta's Graph API.
#[derive(Debug, Clone)]
pub struct MetaGateway {
    client: reqwest::Client,
    base_url: String,
    version: String,
}

impl MetaGateway {
    /// A gateway to `base_url` (`https://graph.facebook.com`) and API `version` (`v21.0`).
    ///
    /// # Errors
    /// When the HTTP client cannot be built.
    pub fn new(base_url: &str, version: &str, timeout: Duration) -> anyhow::Result<Self> {
        let client = reqwest::Client::builder()
            .timeout(timeout)
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("wms/", env!("CARGO_PKG_VERSION")))
            .build()?;
        Ok(Self { client, base_url: base_url.trim_end_matches('/').to_owned(), version: version.to_owned() })
    }

    fn request(&self, r: &OutboundRequest) -> Result<(String, Value), GatewayError> {
        let missing =
            |what: &str| GatewayError::Rejected { reason: format!("the channel has no {what}; set its credentials") };
        match r.channel_type {
            ChannelType::Whatsapp => {
                let id = r.credentials.phone_number_id.as_deref().ok_or_else(|| missing("phone number id"))?;
                let to = r.to.trim_start_matches('+');
                let body = match &r.content {
                    OutboundContent::Text(text) => json!({
                        "messaging_product": "whatsapp", "recipient_type": "individual", "to": to,
                        "type": "text", "text": { "preview_url": false, "body": text },
                    }),
                    OutboundContent::Template(t) => {
                        let mut template = json!({ "name": t.name, "language": { "code": t.language } });
                        if !t.parameters.is_empty() {
                            let params: Vec<Value> =
                                t.parameters.iter().map(|p| json!({"type": "text", "text": p})).collect();
                            template["components"] = json!([{ "type": "body", "parameters": params }]);
                        }
                        json!({ "messaging_product": "whatsapp", "recipient_type": "individual", "to": to,
                                "type": "template", "template": template })
                    }
                };
                Ok((format!("{}/{}/{}/messages", self.base_url, self.version, id), body))
            }
            ChannelType::Messenger | ChannelType::Instagram => {
                let OutboundContent::Text(text) = &r.content else {
                    return Err(GatewayError::Rejected { reason: "templates are a WhatsApp feature".into() });
                };
                // Past the 24-hour window a human agent's answer goes out tagged (up to 7 days).
                let body = match r.tag {
                    Some(tag) => json!({ "recipient": { "id": r.to }, "messaging_type": "MESSAGE_TAG",
                                         "tag": tag.platform_name(), "message": { "text": text } }),
                    None => {
                        json!({ "recipient": { "id": r.to }, "messaging_type": "RESPONSE", "message": { "text": text } })
                    }
                };
                Ok((format!("{}/{}/me/messages", self.base_url, self.version), body))
            }
        }
    }
}

#[async_trait]
impl ChannelGateway for MetaGateway {
    async fn send(&self, r: &OutboundRequest) -> Result<String, GatewayError> {
        let (url, body) = self.request(r)?;
        let token = r.credentials.access_token.as_deref().ok_or_else(|| GatewayError::Rejected {
            reason: "the channel has no access token; set its credentials".into(),
        })?;
        let res = self.client.post(&url).bearer_auth(token).json(&body).send().await.map_err(|e| {
            GatewayError::Transient(if e.is_timeout() {
                "the platform did not answer in time".into()
            } else {
                format!("cannot reach the platform: {e}")
            })
        })?;
        let status = res.status();
        let retry_after =
            res.headers().get("retry-after").and_then(|v| v.to_str().ok()).and_then(|v| v.trim().parse::<u64>().ok());
        let text = res.text().await.unwrap_or_default();
        let json: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        if status.is_success() {
            let id = json["messages"][0]["id"].as_str().or_else(|| json["message_id"].as_str());
            return id.map(str::to_owned).ok_or_else(|| {
                GatewayError::Transient(format!("the platform answered {status} without a message id"))
            });
        }
        let code = json["error"]["code"].as_i64();
        let message = json["error"]["message"].as_str().unwrap_or("no details").to_owned();
        if status.as_u16() == 429 || code.is_some_and(|c| RATE_LIMIT_CODES.contains(&c)) {
            return Err(GatewayError::RateLimited { retry_after_secs: retry_after });
        }
        if status.is_server_error() || code.is_some_and(|c| TRANSIENT_CODES.contains(&c)) {
            return Err(GatewayError::Transient(format!("platform error {status}: {message}")));
        }
        let reason = match code {
            Some(c) => format!("{c}: {message}"),
            None => format!("{status}: {message}"),
        };
        Err(GatewayError::Rejected { reason })
    }
}

#[async_trait]
impl AccountProof for MetaGateway {
    /// `GET {graph}/{version}/{phone_number_id or page id}` with the access token: 200 with that
    /// `id` proves the account; a 4xx (bad token, no access to that id) or another id refuses it;
    /// a transport failure, timeout, 429 or 5xx is "cannot tell".
    async fn prove(&self, channel_type: ChannelType, c: &ChannelCredentials) -> Result<(), ProofError> {
        let what = match channel_type {
            ChannelType::Whatsapp => "phone number id",
            ChannelType::Messenger | ChannelType::Instagram => "page id",
        };
        let id = c.account_id().ok_or_else(|| ProofError::Refused(format!("a {what} is required")))?;
        let token =
            c.access_token.as_deref().ok_or_else(|| ProofError::Refused("an access token is required".into()))?;
        let url = format!("{}/{}/{}", self.base_url, self.version, id);
        let res = self.client.get(&url).bearer_auth(token).send().await.map_err(|e| {
            ProofError::Unreachable(if e.is_timeout() {
                "the platform did not answer in time; try again".into()
            } else {
                "the platform cannot be reached; try again".into()
            })
        })?;
        let status = res.status();
        let json: Value = res.json().await.unwrap_or(Value::Null);
        if status.as_u16() == 429 || status.is_server_error() {
            return Err(ProofError::Unreachable(format!("the platform answered {status}; try again")));
        }
        if !status.is_success() {
            let message = json["error"]["message"].as_str().unwrap_or("no details");
            return Err(ProofError::Refused(format!(
                "the platform refused this access token for {what} {id} ({}: {message})",
                status.as_u16()
            )));
        }
        if json["id"].as_str() != Some(id) {
            return Err(ProofError::Refused(format!("the platform did not confirm {what} {id} for this access token")));
        }
        Ok(())
    }
}

#[async_trait]
impl domain::connectors::templates::TemplateSource for MetaGateway {
    /// `GET {graph}/{version}/{waba_id}/message_templates` with the access token, following
    /// `paging.next` (only on the same Graph API base URL).
    async fn fetch(
        &self,
        c: &ChannelCredentials,
    ) -> Result<Vec<domain::connectors::templates::WhatsappTemplate>, String> {
        let waba = c.waba_id.as_deref().ok_or("the channel's credentials have no waba_id")?;
        let token = c.access_token.as_deref().ok_or("the channel's credentials have no access token")?;
        let mut url = format!(
            "{}/{}/{}/message_templates?limit=100&fields=name,language,status,category,quality_score,components,rejected_reason",
            self.base_url, self.version, waba
        );
        let mut templates = Vec::new();
        // A bound on pages, so a platform that keeps answering `next` cannot hold the worker.
        for _ in 0..50 {
            let res = self.client.get(&url).bearer_auth(token).send().await.map_err(|e| {
                if e.is_timeout() {
                    "the platform did not answer in time".to_owned()
                } else {
                    "the platform cannot be reached".to_owned()
                }
            })?;
            let status = res.status();
            let json: Value = res.json().await.unwrap_or(Value::Null);
            if !status.is_success() {
                let message = json["error"]["message"].as_str().unwrap_or("no details");
                return Err(format!("the platform answered {}: {message}", status.as_u16()));
            }
            templates.extend(json["data"].as_array().into_iter().flatten().filter_map(template_of));
            match json["paging"]["next"].as_str() {
                Some(next) if next.starts_with(&self.base_url) => next.clone_into(&mut url),
                _ => break,
            }
        }
        Ok(templates)
    }
}

/// One template of Meta's listing in wms's words; `None` without a name or language.
fn template_of(t: &Value) -> Option<domain::connectors::templates::WhatsappTemplate> {
    use domain::connectors::templates::{count_parameters, TemplateStatus, WhatsappTemplate};
    let body = t["components"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["type"].as_str().is_some_and(|k| k.eq_ignore_ascii_case("body")))
        .and_then(|c| c["text"].as_str())
        .unwrap_or_default()
        .to_owned();
    let reason = t["rejected_reason"].as_str().filter(|r| !r.is_empty() && *r != "NONE").map(str::to_owned);
    Some(WhatsappTemplate {
        name: t["name"].as_str()?.to_owned(),
        language: t["language"].as_str()?.to_owned(),
        category: t["category"].as_str().unwrap_or_default().to_owned(),
        status: TemplateStatus::from_meta(t["status"].as_str().unwrap_or_default()),
        quality: t["quality_score"]["score"].as_str().map(str::to_owned),
        parameters: count_parameters(&body),
        body,
        rejected_reason: reason,
        // The sync stamps its own time on every template it stores.
        updated_at: time::OffsetDateTime::UNIX_EPOCH,
    })
}

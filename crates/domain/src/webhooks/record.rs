//! The destination record: what the REST API returns (`/v1/webhooks`, the settings API) and the
//! `data` of the `webhook.*` events (docs/contract.md, "Events as a contract"), serialised from this one
//! type so the two cannot drift.

use std::collections::BTreeMap;

use time::OffsetDateTime;

use super::controls::{DeliveryOrdering, EventFilter};
use super::model::WebhookDestination;

/// A webhook destination (`docs/contract.md`).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct WebhookRecord {
    /// Its id.
    pub id: i64,
    /// Where events are sent.
    #[cfg_attr(feature = "openapi", schema(example = "https://hooks.example.com/wms"))]
    pub url: String,
    /// Free label: `custom`, `zapier`, `make`, `n8n`…
    #[cfg_attr(feature = "openapi", schema(example = "custom"))]
    pub platform: String,
    /// Subscribed event types.
    #[cfg_attr(feature = "openapi", schema(example = json!(["message.created", "message.status_updated"])))]
    pub events: Vec<String>,
    /// Whether deliveries are sent.
    pub active: bool,
    /// Creation time.
    #[serde(with = "time::serde::rfc3339")]
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    pub created_at: OffsetDateTime,
    /// Last change.
    #[serde(with = "time::serde::rfc3339")]
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    pub updated_at: OffsetDateTime,
    /// Why wms deactivated it (a 410 answer, or failures for 5 days); null otherwise.
    pub disabled_reason: Option<String>,
    /// When it was deactivated; null while active.
    #[serde(with = "time::serde::rfc3339::option")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, format = DateTime))]
    pub disabled_at: Option<OffsetDateTime>,
    /// Hard cap on deliveries per second (1..1000); null: the server's adaptive pace alone.
    #[cfg_attr(feature = "openapi", schema(example = 50))]
    pub rate_limit_per_second: Option<u32>,
    /// Hard cap on deliveries in flight at once (1..100); null: the server's adaptive pace alone.
    #[cfg_attr(feature = "openapi", schema(example = 10))]
    pub max_in_flight: Option<u32>,
    /// Static headers sent with each delivery (names lowercase). The values only to callers who may
    /// manage webhooks (`webhooks:write`, admins): they are often the receiver's credential, so
    /// every other reader (a key with `webhooks:read` only) gets each name with an empty value.
    #[cfg_attr(feature = "openapi", schema(example = json!({"x-api-key": "k_123"})))]
    pub headers: BTreeMap<String, String>,
    /// Only events matching each non-empty list are delivered; null: all of the subscribed types.
    pub filter: Option<EventFilter>,
    /// `per_thread`: an event of a thread is sent only after the thread's previous one succeeded
    /// or was given up.
    pub ordering: DeliveryOrdering,
}

impl From<WebhookDestination> for WebhookRecord {
    fn from(d: WebhookDestination) -> Self {
        Self {
            id: d.id.0,
            url: d.url,
            platform: d.platform,
            events: d.events,
            active: d.active,
            created_at: d.created_at,
            updated_at: d.updated_at,
            disabled_reason: d.disabled_reason,
            disabled_at: d.disabled_at,
            rate_limit_per_second: d.controls.rate_limit_per_second,
            max_in_flight: d.controls.max_in_flight,
            headers: d.controls.headers,
            filter: d.controls.filter,
            ordering: d.controls.ordering,
        }
    }
}

impl WebhookRecord {
    /// The record as event `data`.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }

    /// The record as the `data` of a `webhook.*` event: events reach every subscriber of the
    /// workspace and `GET /v1/events`, so the URL is only its origin and path
    /// ([`public_url`](super::public_url)), and no header values (they are the receiver's
    /// credentials more often than not).
    pub fn event_data(&self) -> serde_json::Value {
        let mut public = Self { url: super::public_url(&self.url), ..self.clone() };
        for v in public.headers.values_mut() {
            v.clear();
        }
        public.to_json()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::webhooks::model::DestinationId;
    use crate::workspace::WorkspaceId;
    use time::macros::datetime;

    #[test]
    fn a_reader_who_may_not_manage_webhooks_gets_header_names_with_empty_values() {
        use crate::access::{Actor, Caller, Scope, ScopeSet, Surface};
        let at = datetime!(2026-11-24 08:00:00 UTC);
        let controls = crate::webhooks::controls::DestinationControls {
            headers: [("authorization".to_owned(), "Bearer rcv_secret".to_owned())].into(),
            ..Default::default()
        };
        let d = WebhookDestination {
            id: DestinationId(3),
            workspace_id: WorkspaceId(1),
            url: "https://hooks.example.com/a".into(),
            platform: "custom".into(),
            events: vec![],
            active: true,
            disabled_reason: None,
            disabled_at: None,
            created_at: at,
            updated_at: at,
            controls,
            headers_sealed: None,
        };
        let key = |scope: Scope| Caller {
            workspace_id: WorkspaceId(1),
            plan: crate::workspace::PlanTier::Advanced,
            actor: Actor::ApiKey { key_id: 1, scopes: ScopeSet::of([scope]) },
            surface: Surface::RestApi,
        };
        let reader = WebhookRecord::from(d.clone().seen_by(&key(Scope::WebhooksRead)));
        assert_eq!(reader.to_json()["headers"], serde_json::json!({"authorization": ""}));
        let manager = WebhookRecord::from(d.seen_by(&key(Scope::WebhooksWrite)));
        assert_eq!(manager.to_json()["headers"], serde_json::json!({"authorization": "Bearer rcv_secret"}));
    }

    #[test]
    fn the_record_has_every_member_with_utc_times_and_nulls() {
        let at = datetime!(2026-11-24 08:00:00 UTC);
        let d = WebhookDestination {
            id: DestinationId(3),
            workspace_id: WorkspaceId(1),
            url: "https://hooks.example.com/a".into(),
            platform: "custom".into(),
            events: vec!["message.created".into()],
            active: true,
            disabled_reason: None,
            disabled_at: None,
            created_at: at,
            updated_at: at,
            controls: Default::default(),
            headers_sealed: None,
        };
        assert_eq!(
            WebhookRecord::from(d).to_json(),
            serde_json::json!({
                "id": 3,
                "url": "https://hooks.example.com/a",
                "platform": "custom",
                "events": ["message.created"],
                "active": true,
                "created_at": "2026-11-24T08:00:00Z",
                "updated_at": "2026-11-24T08:00:00Z",
                "disabled_reason": null,
                "disabled_at": null,
                "rate_limit_per_second": null,
                "max_in_flight": null,
                "headers": {},
                "filter": null,
                "ordering": "none",
            })
        );
    }
}

//! The feed and replay use cases: validation, then one store call.

use std::sync::Arc;

use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

use super::model::{EventPosition, FeedPage, FeedQuery, ReplayWindow};
use super::ports::EventStore;
use crate::audit::{AuditAction, AuditContext, AuditTarget};
use crate::common::error::{FieldError, RepoError, ValidationErrors};
use crate::common::page::{DEFAULT_LIMIT, MAX_LIMIT};
use crate::common::ports::Clock;
use crate::webhooks::{DestinationId, EventType};
use crate::workspace::WorkspaceId;

/// Why a page of the events feed could not be read.
#[derive(Debug, thiserror::Error)]
pub enum FeedError {
    /// The query is invalid.
    #[error(transparent)]
    Invalid(#[from] ValidationErrors),
    /// Infrastructure failure.
    #[error(transparent)]
    Unknown(#[from] RepoError),
}

/// Why a replay could not be queued.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// No such destination in this workspace.
    #[error("no such webhook destination in this workspace")]
    NotFound,
    /// The window or the event types are invalid.
    #[error(transparent)]
    Invalid(#[from] ValidationErrors),
    /// Infrastructure failure.
    #[error(transparent)]
    Unknown(#[from] RepoError),
}

/// Raw query of `GET /v1/events`.
#[derive(Debug, Clone, Default)]
pub struct FeedInput {
    /// Page size, 1 to 100 (default 25).
    pub limit: Option<i64>,
    /// `next_cursor` of an earlier page.
    pub cursor: Option<String>,
    /// One event type.
    pub event_type: Option<String>,
    /// RFC 3339 time.
    pub since: Option<String>,
}

/// Raw body of `POST /v1/webhooks/{id}/replay`.
#[derive(Debug, Clone, Default)]
pub struct ReplayInput {
    /// RFC 3339 time; required.
    pub since: Option<String>,
    /// RFC 3339 time after `since`; now when absent.
    pub until: Option<String>,
    /// Event types; every type the destination subscribes to when absent.
    pub event_types: Option<Vec<String>>,
}

/// The events feed and replays.
pub struct EventsService {
    /// Where events are kept.
    pub store: Arc<dyn EventStore>,
    /// Now, for replays.
    pub clock: Arc<dyn Clock>,
}

impl std::fmt::Debug for EventsService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventsService").finish_non_exhaustive()
    }
}

fn time_field(field: &str, raw: &str, errors: &mut Vec<FieldError>) -> Option<OffsetDateTime> {
    let t = crate::common::instant::parse_rfc3339(raw);
    if t.is_none() {
        errors.push(FieldError::new(field, crate::common::instant::EXPECTED));
    }
    t
}

fn event_type(field: &str, raw: &str, errors: &mut Vec<FieldError>) -> Option<EventType> {
    match raw.parse::<EventType>() {
        Ok(e) if e.is_subscribable() => Some(e),
        _ => {
            errors.push(FieldError::new(field, format!("`{raw}` is not an event type (see GET /v1/event-types)")));
            None
        }
    }
}

impl EventsService {
    /// A page of the workspace's events, oldest first after the cursor.
    ///
    /// # Errors
    /// [`FeedError::Invalid`] naming `limit`, `cursor`, `type` or `since`.
    pub async fn feed(&self, ws: WorkspaceId, input: &FeedInput) -> Result<FeedPage, FeedError> {
        let mut errors = Vec::new();
        let limit = match input.limit {
            None => DEFAULT_LIMIT,
            Some(l) if (1..=i64::from(MAX_LIMIT)).contains(&l) => l as u16,
            Some(_) => {
                errors.push(FieldError::new("limit", format!("must be between 1 and {MAX_LIMIT}")));
                DEFAULT_LIMIT
            }
        };
        // An empty cursor is the start, as on every other listing.
        let after = match input.cursor.as_deref().filter(|c| !c.is_empty()) {
            None => EventPosition::default(),
            Some(c) => EventPosition::from_cursor(c).unwrap_or_else(|| {
                errors.push(FieldError::new("cursor", "is not a cursor returned by GET /v1/events"));
                EventPosition::default()
            }),
        };
        let event_type = input.event_type.as_deref().and_then(|t| event_type("type", t, &mut errors));
        let since = input.since.as_deref().and_then(|s| time_field("since", s, &mut errors));
        if !errors.is_empty() {
            return Err(ValidationErrors(errors).into());
        }
        Ok(self.store.page(ws, FeedQuery { after, event_type, since, limit }).await?)
    }

    /// Queues the window's events again for the destination; returns how many.
    ///
    /// # Errors
    /// [`ReplayError::Invalid`] naming `since`, `until` or `event_types`;
    /// [`ReplayError::NotFound`] for another workspace's destination.
    pub async fn replay(
        &self,
        ws: WorkspaceId,
        audit: &AuditContext,
        id: DestinationId,
        input: &ReplayInput,
    ) -> Result<u64, ReplayError> {
        let mut errors = Vec::new();
        let now = self.clock.now();
        let since = match input.since.as_deref() {
            None => {
                errors.push(FieldError::new("since", "is required"));
                None
            }
            Some(s) => time_field("since", s, &mut errors),
        };
        let until = input.until.as_deref().and_then(|u| time_field("until", u, &mut errors));
        if let (Some(s), Some(u)) = (since, until) {
            if u <= s {
                errors.push(FieldError::new("until", "must be after `since`"));
            }
        }
        let mut event_types = Vec::new();
        if let Some(types) = &input.event_types {
            if types.is_empty() {
                errors.push(FieldError::new("event_types", "must name at least one event type when given"));
            }
            for t in types {
                if let Some(e) = event_type("event_types", t, &mut errors) {
                    if !event_types.contains(&e) {
                        event_types.push(e);
                    }
                }
            }
        }
        let (Some(since), true) = (since, errors.is_empty()) else {
            return Err(ValidationErrors(errors).into());
        };
        let window = ReplayWindow { since, until: until.unwrap_or(now), event_types, now };
        let types: Vec<&str> = window.event_types.iter().map(|t| t.as_str()).collect();
        let details = serde_json::json!({
            "since": window.since.format(&Rfc3339).ok(),
            "until": window.until.format(&Rfc3339).ok(),
            "event_types": types,
        });
        let entry = audit.entry(ws, AuditAction::WebhookReplayed, AuditTarget::webhook(Some(id.0)), details);
        self.store.replay(ws, id, &window, &entry).await?.ok_or(ReplayError::NotFound)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::ports::MockClock;
    use crate::events::MockEventStore;
    use time::macros::datetime;

    fn service(store: MockEventStore) -> EventsService {
        let mut clock = MockClock::new();
        clock.expect_now().return_const(datetime!(2026-11-24 08:00 UTC));
        EventsService { store: Arc::new(store), clock: Arc::new(clock) }
    }

    fn fields(e: ValidationErrors) -> Vec<String> {
        e.0.into_iter().map(|f| f.field).collect()
    }

    #[tokio::test]
    async fn bad_feed_queries_name_their_fields_and_never_reach_the_store() {
        let s = service(MockEventStore::new());
        let input = FeedInput {
            limit: Some(0),
            cursor: Some("nope".into()),
            event_type: Some("webhook.test".into()),
            since: Some("yesterday".into()),
        };
        let Err(FeedError::Invalid(err)) = s.feed(WorkspaceId(1), &input).await else { panic!("expected invalid") };
        assert_eq!(fields(err), ["limit", "cursor", "type", "since"]);
    }

    #[tokio::test]
    async fn replay_needs_since_and_a_window_that_moves_forward() {
        let s = service(MockEventStore::new());
        let Err(ReplayError::Invalid(err)) =
            s.replay(WorkspaceId(1), &AuditContext::cli(), DestinationId(2), &ReplayInput::default()).await
        else {
            panic!("expected invalid")
        };
        assert_eq!(fields(err), ["since"]);
        let input = ReplayInput {
            since: Some("2026-11-24T08:00:00Z".into()),
            until: Some("2026-11-24T07:00:00Z".into()),
            event_types: Some(vec!["message.created".into(), "message.exploded".into()]),
        };
        let Err(ReplayError::Invalid(err)) =
            s.replay(WorkspaceId(1), &AuditContext::cli(), DestinationId(2), &input).await
        else {
            panic!("expected invalid")
        };
        assert_eq!(fields(err), ["until", "event_types"]);
    }

    #[tokio::test]
    async fn replay_defaults_until_to_now_and_reports_another_workspaces_destination_as_missing() {
        let mut store = MockEventStore::new();
        store
            .expect_replay()
            .withf(|ws, d, w, record| {
                *ws == WorkspaceId(1)
                    && *d == DestinationId(2)
                    && w.until == datetime!(2026-11-24 08:00 UTC)
                    && w.event_types == [EventType::MessageCreated]
                    && record.action == AuditAction::WebhookReplayed
                    && record.details["event_types"] == serde_json::json!(["message.created"])
            })
            .returning(|_, _, _, _| Ok(None));
        let input = ReplayInput {
            since: Some("2026-11-23T08:00:00Z".into()),
            until: None,
            event_types: Some(vec!["message.created".into(), "message.created".into()]),
        };
        let err = service(store)
            .replay(WorkspaceId(1), &AuditContext::cli(), DestinationId(2), &input)
            .await
            .expect_err("not found");
        assert!(matches!(err, ReplayError::NotFound));
    }
}

//! Which actions have no effect beyond the records they answer with: the only ones whose work
//! may start before the request's credential check has admitted it (`docs/rate-limit.md`,
//! "Refused requests have no effect").

use super::Action;

impl Action {
    /// Whether doing the action only reads the workspace's records: it changes nothing, reveals
    /// no secret and records nothing in the audit log. A request refused 401, 403 or 429 must
    /// have no effect, so only such an action may run ahead of its request's check, its answer
    /// kept back until the check admits it. New actions are effectful until listed here.
    /// Reading webhook destinations is not listed: it opens their sealed header values.
    pub fn only_reads(self) -> bool {
        matches!(
            self,
            Action::ChannelsRead
                | Action::MessagesRead
                | Action::ThreadsRead
                | Action::ContactsRead
                | Action::LabelsRead
                | Action::TeamsRead
                | Action::AiAgentsRead
                | Action::MembersRead
                | Action::EventsRead
                | Action::AuditRead
                | Action::ApiKeysRead
                | Action::AnalyticsRead
                | Action::RestReferenceRead
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn revealing_a_secret_and_every_write_is_effectful() {
        // Reading destinations opens their sealed header values: a refused request must not.
        for a in [
            Action::WebhooksRead,
            Action::WebhooksWrite,
            Action::ApiKeysCreate,
            Action::ContactsWrite,
            Action::AssistantUse,
        ] {
            assert!(!a.only_reads(), "{a:?}");
        }
        assert!(Action::ChannelsRead.only_reads());
    }
}

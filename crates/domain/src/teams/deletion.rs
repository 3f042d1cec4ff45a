//! Deleting a team: what happens to its threads (docs/contract.md, "Conversation lifecycle and
//! assignment"). The storage adapter locks the team and its threads, loads who holds each, asks,
//! and writes what comes back before the team's row goes.

use super::assignment::AssignmentReason;
use crate::channels::{Channel, ChannelRecord};
use crate::threads::Assignee;
use crate::threads::ThreadRecord;
use crate::webhooks::DomainEvent;

/// A thread of the team (its `team_id`, or the team as its assignee), as the deletion sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TeamThread {
    /// The thread.
    pub thread_id: i64,
    /// Who holds it now.
    pub assignee: Option<Assignee>,
}

/// What deleting the team changes on its threads. Every one of them loses `team_id` and leaves
/// the team's queue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TeamDeletion {
    /// Threads assigned to the team itself: they become unassigned with [`Self::reason`], one
    /// `thread.assigned` each.
    pub unassigned: Vec<i64>,
    /// Threads a member (or an AI agent) holds: they keep their assignee; no event, as their
    /// assignee does not change.
    pub released: Vec<i64>,
    /// `team_deleted`.
    pub reason: AssignmentReason,
    /// Channels whose default team it was: their `default_team_id` becomes null, one
    /// `channel.updated` each.
    pub channels: Vec<i64>,
}

impl TeamDeletion {
    /// The event each unassigned thread emits: its plain record, unassigned.
    pub fn event(&self, thread: ThreadRecord) -> DomainEvent {
        DomainEvent::ThreadAssigned(thread)
    }

    /// The event each of [`Self::channels`] emits: its record without the default team.
    pub fn channel_event(&self, channel: Channel) -> DomainEvent {
        DomainEvent::ChannelUpdated(ChannelRecord::from(channel))
    }

    /// Every thread the deletion writes.
    pub fn threads(&self) -> impl Iterator<Item = i64> + '_ {
        self.unassigned.iter().chain(&self.released).copied()
    }
}

/// Deleting team `team_id` with these threads, the default team of `channels`.
pub fn decide_team_deletion(team_id: i64, threads: &[TeamThread], channels: &[i64]) -> TeamDeletion {
    let mut out = TeamDeletion {
        unassigned: Vec::new(),
        released: Vec::new(),
        reason: AssignmentReason::TeamDeleted,
        channels: channels.to_vec(),
    };
    for t in threads {
        if t.assignee == Some(Assignee::Team(team_id)) {
            out.unassigned.push(t.thread_id);
        } else {
            out.released.push(t.thread_id);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_of_the_team_itself_become_unassigned_and_members_keep_theirs() {
        let threads = [
            TeamThread { thread_id: 1, assignee: Some(Assignee::Team(7)) },
            TeamThread { thread_id: 2, assignee: Some(Assignee::User(3)) },
            TeamThread { thread_id: 3, assignee: Some(Assignee::AiAgent(4)) },
            TeamThread { thread_id: 4, assignee: Some(Assignee::Team(7)) },
            TeamThread { thread_id: 5, assignee: None },
        ];
        let d = decide_team_deletion(7, &threads, &[11, 12]);
        assert_eq!(d.unassigned, [1, 4]);
        assert_eq!(d.channels, [11, 12], "each channel it was the default team of is updated");
        assert_eq!(d.released, [2, 3, 5]);
        assert_eq!(d.reason, AssignmentReason::TeamDeleted);
        assert_eq!(d.threads().count(), 5);
    }

    #[test]
    fn a_team_without_threads_changes_nothing() {
        assert_eq!(decide_team_deletion(7, &[], &[]).threads().count(), 0);
    }
}

-- The conversation reports' storage (docs/contract.md, "Conversation reports, business hours and
-- SLAs"; docs/architecture.md, "Reports"). Each figure is computed once, when its event happens
-- (message stored, thread resolved, SLA met or missed), by the domain's `reports::decide`, and
-- stored here in the event's transaction; a report only aggregates the rows of its period.

-- Each thread's current cycle: what the next event is measured against.
CREATE TABLE conversation_cycles (
    thread_id BIGINT PRIMARY KEY REFERENCES threads (id) ON DELETE CASCADE,
    workspace_id BIGINT NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    started_at TIMESTAMPTZ NOT NULL,
    first_response_at TIMESTAMPTZ,
    first_response_ai_at TIMESTAMPTZ,
    awaiting_since TIMESTAMPTZ
);

-- One row per figure. `kind`: 1 conversation, 2 incoming, 3 outgoing, 4 first_response,
-- 5 first_response_ai, 6 reply, 7 resolution, 8 sla_hit, 9 sla_missed. Durations keep their
-- start and end instants with the wall-clock and the business seconds (computed with the hours
-- in force; recomputed for the workspace when its hours change).
CREATE TABLE conversation_facts (
    id BIGSERIAL PRIMARY KEY,
    workspace_id BIGINT NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    thread_id BIGINT NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
    channel_id BIGINT NOT NULL,
    kind SMALLINT NOT NULL,
    at TIMESTAMPTZ NOT NULL,
    started_at TIMESTAMPTZ,
    seconds BIGINT,
    business_seconds BIGINT,
    user_id BIGINT,
    team_id BIGINT
);

-- A report reads its period of one workspace from this index alone (an index-only scan).
CREATE INDEX conversation_facts_period ON conversation_facts (workspace_id, at)
    INCLUDE (kind, seconds, business_seconds, user_id, team_id, channel_id, thread_id);
-- Erasing a thread's history, refiguring a workspace's durations.
CREATE INDEX conversation_facts_thread ON conversation_facts (thread_id);

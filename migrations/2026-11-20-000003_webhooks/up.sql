-- Outbound webhooks: a transactional outbox of events, one delivery per (event, destination) and
-- a log of every attempt. docs/webhooks.md explains the design.

-- Since when every delivery to the destination has failed (NULL after any success); the 5-day
-- auto-deactivation rule reads it. Kept here, not in a cache, so every instance agrees.
ALTER TABLE webhook_destinations ADD COLUMN failing_since timestamptz;

-- One row per event, written in the same transaction as the change that caused it.
CREATE TABLE webhook_events (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    workspace_id bigint      NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    event_type   text        NOT NULL CHECK (event_type ~ '^[a-z_]+\.[a-z_]+$'),
    -- The webhook-id header: the same on every attempt and every destination of the event.
    message_id   text        NOT NULL UNIQUE,
    -- The exact body that is signed and sent: {"type","timestamp","workspace_id","data"}.
    payload      text        NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    UNIQUE (workspace_id, id)
);
CREATE INDEX webhook_events_created_idx ON webhook_events (created_at);

-- One event to one destination. status: pending (waiting for next_attempt_at), sending (leased by
-- a worker until next_attempt_at; a crashed worker's lease simply expires), paused (destination
-- inactive), succeeded, failed.
CREATE TABLE webhook_deliveries (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    workspace_id    bigint      NOT NULL,
    destination_id  bigint      NOT NULL,
    event_id        bigint      NOT NULL,
    status          text        NOT NULL DEFAULT 'pending'
                    CHECK (status IN ('pending', 'sending', 'paused', 'succeeded', 'failed')),
    attempt_count   integer     NOT NULL DEFAULT 0 CHECK (attempt_count >= 0),
    next_attempt_at timestamptz,
    last_attempt_at timestamptz,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    UNIQUE (workspace_id, id),
    FOREIGN KEY (workspace_id, destination_id) REFERENCES webhook_destinations (workspace_id, id) ON DELETE CASCADE,
    FOREIGN KEY (workspace_id, event_id) REFERENCES webhook_events (workspace_id, id) ON DELETE CASCADE,
    CHECK (status NOT IN ('pending', 'sending') OR next_attempt_at IS NOT NULL)
);
-- The workers' queue: due rows in time order, only unfinished ones.
CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at) WHERE status IN ('pending', 'sending');
-- In-flight deliveries per destination (the concurrency limit).
CREATE INDEX webhook_deliveries_sending_idx ON webhook_deliveries (destination_id) WHERE status = 'sending';
-- The delivery log, newest first; also pausing and resuming a destination's deliveries.
CREATE INDEX webhook_deliveries_destination_idx ON webhook_deliveries (destination_id, id DESC);
CREATE INDEX webhook_deliveries_event_idx ON webhook_deliveries (event_id);
-- Pruning finished deliveries.
CREATE INDEX webhook_deliveries_finished_idx ON webhook_deliveries (updated_at) WHERE status IN ('succeeded', 'failed');

-- Every attempt: time, status code or transport error, duration, response excerpt, next attempt.
CREATE TABLE webhook_attempts (
    id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    workspace_id     bigint      NOT NULL,
    delivery_id      bigint      NOT NULL,
    attempt_number   integer     NOT NULL CHECK (attempt_number > 0),
    trigger          text        NOT NULL CHECK (trigger IN ('scheduled', 'manual', 'test')),
    attempted_at     timestamptz NOT NULL,
    status_code      integer     CHECK (status_code BETWEEN 100 AND 999),
    error            text,
    duration_ms      integer     NOT NULL CHECK (duration_ms >= 0),
    response_excerpt text        NOT NULL DEFAULT '',
    next_attempt_at  timestamptz,
    FOREIGN KEY (workspace_id, delivery_id) REFERENCES webhook_deliveries (workspace_id, id) ON DELETE CASCADE,
    CHECK (num_nonnulls(status_code, error) >= 1)
);
CREATE INDEX webhook_attempts_delivery_idx ON webhook_attempts (delivery_id, attempt_number);
CREATE INDEX webhook_attempts_time_idx ON webhook_attempts (attempted_at);

-- Token buckets of the per-destination rate limit, shared by every instance.
CREATE TABLE webhook_throttles (
    destination_id bigint           PRIMARY KEY REFERENCES webhook_destinations (id) ON DELETE CASCADE,
    tokens         double precision NOT NULL,
    refilled_at    timestamptz      NOT NULL
);

-- Issue 32: SLA policies and each thread's SLA in its current cycle (docs/product/sla.md).

CREATE TABLE sla_policies (
    id                     bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    workspace_id           bigint      NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    name                   text        NOT NULL CHECK (char_length(name) BETWEEN 1 AND 100),
    first_response_seconds bigint CHECK (first_response_seconds > 0),
    next_response_seconds  bigint CHECK (next_response_seconds > 0),
    resolution_seconds     bigint CHECK (resolution_seconds > 0),
    business_hours         boolean     NOT NULL DEFAULT false,
    -- Empty: every channel, every thread. Label names as given (matched ignoring case).
    channel_ids            bigint[]    NOT NULL DEFAULT '{}',
    labels                 text[]      NOT NULL DEFAULT '{}',
    created_at             timestamptz NOT NULL DEFAULT now(),
    UNIQUE (workspace_id, id)
);

-- One row per thread whose current cycle has an SLA; the targets are copied at the cycle's start,
-- so changing or deleting the policy never changes a running SLA.
CREATE TABLE thread_slas (
    workspace_id           bigint      NOT NULL,
    thread_id              bigint      NOT NULL,
    policy_id              bigint,
    first_response_seconds bigint,
    next_response_seconds  bigint,
    resolution_seconds     bigint,
    business_hours         boolean     NOT NULL,
    cycle_started_at       timestamptz NOT NULL,
    first_response_due_at  timestamptz,
    next_response_due_at   timestamptz,
    resolution_due_at      timestamptz,
    responded              boolean     NOT NULL DEFAULT false,
    resolved               boolean     NOT NULL DEFAULT false,
    stopped_since          timestamptz,
    breaches               text[]      NOT NULL DEFAULT '{}',
    -- The breach timer: the earliest due time still running; null while the clock is stopped or
    -- once nothing runs. The row is the timer, so it survives restarts.
    check_at               timestamptz,
    updated_at             timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (workspace_id, thread_id),
    FOREIGN KEY (workspace_id, thread_id) REFERENCES threads (workspace_id, id) ON DELETE CASCADE,
    FOREIGN KEY (workspace_id, policy_id) REFERENCES sla_policies (workspace_id, id) ON DELETE SET NULL (policy_id)
);
-- The breach timer's scan: only running SLAs are in it, in due order.
CREATE INDEX thread_slas_check_idx ON thread_slas (check_at) WHERE check_at IS NOT NULL;
CREATE INDEX thread_slas_policy_idx ON thread_slas (workspace_id, policy_id) WHERE policy_id IS NOT NULL;

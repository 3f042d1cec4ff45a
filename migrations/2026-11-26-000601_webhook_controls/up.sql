-- Destination controls the integrator sets (docs/webhooks.md, "Destination controls"): hard caps
-- on the pace (null: the server's bounds), static headers, a filter and per-thread ordering.
ALTER TABLE webhook_destinations
    ADD COLUMN rate_limit_per_second integer CHECK (rate_limit_per_second BETWEEN 1 AND 1000),
    ADD COLUMN max_in_flight integer CHECK (max_in_flight BETWEEN 1 AND 100),
    ADD COLUMN headers jsonb NOT NULL DEFAULT '{}',
    ADD COLUMN filter jsonb,
    ADD COLUMN ordering text NOT NULL DEFAULT 'none' CHECK (ordering IN ('none', 'per_thread')),
    -- Health as the integrator sees it: failed attempts since the last success, and whether
    -- `webhook.failing` has been emitted for this run of failures.
    ADD COLUMN failed_in_a_row integer NOT NULL DEFAULT 0,
    ADD COLUMN failing boolean NOT NULL DEFAULT false;

-- The thread a delivery must wait its turn in (destinations with `ordering = per_thread`); null:
-- sent as soon as the limits allow.
ALTER TABLE webhook_deliveries ADD COLUMN ordering_key bigint;
CREATE INDEX webhook_deliveries_ordering_idx ON webhook_deliveries (destination_id, ordering_key, id)
    WHERE ordering_key IS NOT NULL AND status IN ('pending', 'sending', 'paused');

-- The adaptive pace of each destination, shared by every instance (null: not measured yet).
ALTER TABLE webhook_throttles
    ADD COLUMN concurrency double precision,
    ADD COLUMN rate double precision,
    ADD COLUMN threshold double precision,
    ADD COLUMN decreased_at timestamptz,
    ADD COLUMN hold_until timestamptz;

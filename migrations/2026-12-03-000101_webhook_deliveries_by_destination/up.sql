-- Each destination's unfinished deliveries in due order (docs/webhooks.md, "Workers"): a claim
-- reads each destination's oldest due deliveries here, up to what it may take, and lists the
-- destinations with a delivery due by one descent per destination, so that one destination's
-- backlog never hides another's due deliveries behind it. `id` orders deliveries due at the
-- same time (an event run of one commit) without reading all of them.
CREATE INDEX webhook_deliveries_destination_due_idx ON webhook_deliveries (destination_id, next_attempt_at, id)
    WHERE status IN ('pending', 'sending');

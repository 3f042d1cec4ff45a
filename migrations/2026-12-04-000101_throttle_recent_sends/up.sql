-- A destination's throttle keeps the claims that sent to it in the last window (when, how many),
-- so that no second holds more sends than its rate: the token bucket alone let an idle
-- destination receive its burst and then its refill within the same second, twice its rate.
-- Existing throttles start with no recent sends.
ALTER TABLE webhook_throttles
    ADD COLUMN recent_at timestamptz[] NOT NULL DEFAULT '{}',
    ADD COLUMN recent_sent integer[] NOT NULL DEFAULT '{}',
    ADD CONSTRAINT webhook_throttles_recent_check CHECK (cardinality(recent_at) = cardinality(recent_sent));

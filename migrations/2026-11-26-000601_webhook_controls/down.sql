ALTER TABLE webhook_throttles
    DROP COLUMN concurrency, DROP COLUMN rate, DROP COLUMN threshold, DROP COLUMN decreased_at, DROP COLUMN hold_until;
DROP INDEX webhook_deliveries_ordering_idx;
ALTER TABLE webhook_deliveries DROP COLUMN ordering_key;
ALTER TABLE webhook_destinations
    DROP COLUMN rate_limit_per_second, DROP COLUMN max_in_flight, DROP COLUMN headers, DROP COLUMN filter,
    DROP COLUMN ordering, DROP COLUMN failed_in_a_row, DROP COLUMN failing;

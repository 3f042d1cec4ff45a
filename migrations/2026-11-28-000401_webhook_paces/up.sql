-- The adaptive pace of each destination gets its own row, apart from its token bucket: the claim
-- locks the bucket (the rate and the in-flight count must be exact across instances) and only
-- reads the pace, and the recorder writes the pace without waiting on a claim. When both lived
-- in one row, every claim and every recorded batch queued on it (docs/benchmarks.md, issue 36).
CREATE TABLE webhook_paces (
    destination_id bigint           PRIMARY KEY REFERENCES webhook_destinations (id) ON DELETE CASCADE,
    concurrency    double precision NOT NULL,
    rate           double precision NOT NULL,
    threshold      double precision,
    decreased_at   timestamptz,
    hold_until     timestamptz
);
INSERT INTO webhook_paces (destination_id, concurrency, rate, threshold, decreased_at, hold_until)
SELECT destination_id, concurrency, rate, threshold, decreased_at, hold_until
FROM webhook_throttles WHERE concurrency IS NOT NULL AND rate IS NOT NULL;
ALTER TABLE webhook_throttles
    DROP COLUMN concurrency, DROP COLUMN rate, DROP COLUMN threshold, DROP COLUMN decreased_at, DROP COLUMN hold_until;

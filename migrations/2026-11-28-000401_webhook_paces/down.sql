ALTER TABLE webhook_throttles
    ADD COLUMN concurrency double precision,
    ADD COLUMN rate double precision,
    ADD COLUMN threshold double precision,
    ADD COLUMN decreased_at timestamptz,
    ADD COLUMN hold_until timestamptz;
UPDATE webhook_throttles t
SET concurrency = p.concurrency, rate = p.rate, threshold = p.threshold, decreased_at = p.decreased_at,
    hold_until = p.hold_until
FROM webhook_paces p WHERE p.destination_id = t.destination_id;
DROP TABLE webhook_paces;

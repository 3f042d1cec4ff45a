DROP TABLE webhook_throttles;
DROP TABLE webhook_attempts;
DROP TABLE webhook_deliveries;
DROP TABLE webhook_events;
ALTER TABLE webhook_destinations DROP COLUMN failing_since;

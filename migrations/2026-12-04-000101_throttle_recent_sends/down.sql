ALTER TABLE webhook_throttles
    DROP CONSTRAINT webhook_throttles_recent_check,
    DROP COLUMN recent_sent,
    DROP COLUMN recent_at;

-- Back to a count per window: the window starts at the oldest failure kept.
ALTER TABLE login_throttle ADD COLUMN failures integer;
UPDATE login_throttle SET failures = cardinality(failed_at), last_failed_at = failed_at[1];
ALTER TABLE login_throttle
    ALTER COLUMN failures SET NOT NULL,
    ADD CONSTRAINT login_throttle_failures_check CHECK (failures > 0);
ALTER TABLE login_throttle RENAME COLUMN last_failed_at TO window_started_at;
ALTER INDEX login_throttle_last_failed_idx RENAME TO login_throttle_window_idx;
ALTER TABLE login_throttle DROP COLUMN failed_at;

-- The sign-in and callback throttles slide: a subject keeps the times of its latest failures (at
-- most its budget of them) instead of a count since the first failure of a window, so no stretch
-- of the window's length holds more failures than the budget. Rows from before keep their
-- failures, each dated at the start of the window they were counted in: they stop counting when
-- that window would have ended, as they did before.
ALTER TABLE login_throttle ADD COLUMN failed_at timestamptz[];
UPDATE login_throttle SET failed_at = array_fill(window_started_at, ARRAY[LEAST(failures, 50)]);
ALTER TABLE login_throttle
    ALTER COLUMN failed_at SET NOT NULL,
    ADD CONSTRAINT login_throttle_failed_at_check CHECK (cardinality(failed_at) > 0);
ALTER TABLE login_throttle RENAME COLUMN window_started_at TO last_failed_at;
ALTER INDEX login_throttle_window_idx RENAME TO login_throttle_last_failed_idx;
ALTER TABLE login_throttle DROP COLUMN failures;

-- The window's admissions go back into the window row's arrays, and wms_rate_window reads them again.
ALTER TABLE rate_limit_windows
    ADD COLUMN bucket_seconds bigint[]  NOT NULL DEFAULT '{}',
    ADD COLUMN bucket_counts  integer[] NOT NULL DEFAULT '{}',
    ADD COLUMN total          integer   NOT NULL DEFAULT 0 CHECK (total >= 0),
    ADD CONSTRAINT rate_limit_windows_check1 CHECK (cardinality(bucket_seconds) = cardinality(bucket_counts));

UPDATE rate_limit_windows w
   SET bucket_seconds = s.seconds, bucket_counts = s.counts, total = s.total
  FROM (SELECT window_id, array_agg(second ORDER BY second) AS seconds,
               array_agg(admitted ORDER BY second) AS counts, sum(admitted)::integer AS total
          FROM rate_limit_seconds GROUP BY window_id) s
 WHERE s.window_id = w.id;

DROP TABLE rate_limit_seconds;

-- The live definition of wms_rate_window(): the one place it is written (see ../README.md).
-- The sliding window of one credential (docs/rate-limit.md): the window row of the key p_api_key,
-- or of the member (p_workspace, p_user) when p_api_key is NULL, created if missing and locked,
-- so every instance serialises on it and the limit is exact. Counts up to p_count requests
-- (the first ones) against p_limit per p_window seconds; p_count = 0 counts nothing and only
-- reports the window (a caller refused for its plan). retry_after is set when some of a positive
-- p_count were refused. Called by wms_authenticate (every credential check) and wms_admit_member
-- (the assistant endpoints); the decision on a 429 is theirs to report, the arithmetic is here.
CREATE OR REPLACE FUNCTION wms_rate_window(p_api_key bigint, p_workspace bigint, p_user bigint, p_limit integer,
                                 p_window integer, p_count integer)
RETURNS TABLE (
    admitted    integer,
    remaining   integer,
    reset_after integer,
    retry_after integer,
    now_epoch   bigint
)
LANGUAGE plpgsql
AS $$
#variable_conflict use_column
DECLARE
    v_win_id     bigint;
    v_seconds    bigint[];
    v_counts     integer[];
    v_total      integer;
    v_sec        bigint;
    v_n          integer;
    v_i          integer;
    v_drop       integer;
    v_changed    boolean := false;
    v_need       integer;
BEGIN
    admitted := 0;
    IF p_api_key IS NOT NULL THEN
        SELECT r.id, r.bucket_seconds, r.bucket_counts, r.total INTO v_win_id, v_seconds, v_counts, v_total
          FROM rate_limit_windows r WHERE r.api_key_id = p_api_key FOR UPDATE;
        IF NOT FOUND THEN
            INSERT INTO rate_limit_windows (api_key_id) VALUES (p_api_key) ON CONFLICT DO NOTHING;
            SELECT r.id, r.bucket_seconds, r.bucket_counts, r.total INTO v_win_id, v_seconds, v_counts, v_total
              FROM rate_limit_windows r WHERE r.api_key_id = p_api_key FOR UPDATE;
        END IF;
    ELSE
        -- A member's window is shared by all of the member's tokens and sessions and the
        -- assistant endpoints.
        SELECT r.id, r.bucket_seconds, r.bucket_counts, r.total INTO v_win_id, v_seconds, v_counts, v_total
          FROM rate_limit_windows r WHERE r.workspace_id = p_workspace AND r.user_id = p_user FOR UPDATE;
        IF NOT FOUND THEN
            INSERT INTO rate_limit_windows (workspace_id, user_id) VALUES (p_workspace, p_user) ON CONFLICT DO NOTHING;
            SELECT r.id, r.bucket_seconds, r.bucket_counts, r.total INTO v_win_id, v_seconds, v_counts, v_total
              FROM rate_limit_windows r WHERE r.workspace_id = p_workspace AND r.user_id = p_user FOR UPDATE;
        END IF;
    END IF;

    -- The time is read after the lock is held, so admissions are recorded in lock order and the
    -- buckets stay sorted; a clock stepping backwards is folded into the newest bucket.
    v_sec := floor(extract(epoch FROM clock_timestamp()))::bigint;
    v_n := coalesce(cardinality(v_seconds), 0);
    IF v_n > 0 AND v_seconds[v_n] > v_sec THEN
        v_sec := v_seconds[v_n];
    END IF;
    now_epoch := v_sec;

    -- An admission in second s may lie inside (t - window, t] for some t of the current second
    -- iff s >= v_sec - window; older buckets are dropped. Keeping the others is conservative: an
    -- admission occupies its slot for between window and window + 1 seconds, never less.
    v_i := 1;
    WHILE v_i <= v_n AND v_seconds[v_i] < v_sec - p_window LOOP
        v_total := v_total - v_counts[v_i];
        v_i := v_i + 1;
    END LOOP;
    IF v_i > 1 THEN
        v_seconds := coalesce(v_seconds[v_i:v_n], '{}');
        v_counts := coalesce(v_counts[v_i:v_n], '{}');
        v_n := v_n - (v_i - 1);
        v_changed := true;
    END IF;

    IF p_count > 0 THEN
        admitted := least(p_count, greatest(p_limit - v_total, 0));
        IF admitted > 0 THEN
            IF v_n > 0 AND v_seconds[v_n] = v_sec THEN
                v_counts[v_n] := v_counts[v_n] + admitted;
            ELSE
                v_seconds := v_seconds || v_sec;
                v_counts := v_counts || admitted;
                v_n := v_n + 1;
            END IF;
            v_total := v_total + admitted;
            v_changed := true;
        END IF;
        IF admitted < p_count THEN
            -- The earliest second at which fewer than p_limit admissions remain counted.
            v_need := v_total - p_limit + 1;
            v_drop := 0;
            v_i := 1;
            WHILE v_i <= v_n LOOP
                v_drop := v_drop + v_counts[v_i];
                EXIT WHEN v_drop >= v_need;
                v_i := v_i + 1;
            END LOOP;
            retry_after := greatest(1, v_seconds[least(v_i, v_n)] + p_window + 1 - v_sec)::integer;
        END IF;
    END IF;

    IF v_changed THEN
        UPDATE rate_limit_windows SET bucket_seconds = v_seconds, bucket_counts = v_counts, total = v_total
         WHERE id = v_win_id;
    END IF;

    remaining := greatest(p_limit - v_total, 0);
    reset_after := CASE WHEN v_n = 0 THEN 0 ELSE greatest(1, v_seconds[1] + p_window + 1 - v_sec)::integer END;
    RETURN NEXT;
END;
$$;

-- The live definition of wms_rate_window(): the one place it is written (see ../README.md).
-- The sliding window of one credential (docs/rate-limit.md): the window row of the key p_api_key,
-- or of the member (p_workspace, p_user) when p_api_key is NULL, created if missing and locked,
-- so every instance serialises on it and the limit is exact. Counts up to p_count requests
-- (the first ones) against p_limit per p_window seconds; p_count = 0 counts nothing and only
-- reports the window (a caller refused for its plan). retry_after is set when some of a positive
-- p_count were refused. Called by wms_authenticate (every credential check) and wms_admit_member
-- (the assistant endpoints); the decision on a 429 is theirs to report, the arithmetic is here.
--
-- The admissions are one small row per second that admitted something (rate_limit_seconds),
-- each carrying the window's running count before it (admitted_before), so the count inside the
-- window is the newest row's running total minus the running count before the oldest row still
-- inside: two index lookups, whatever the traffic of the hour. The window row itself is only
-- locked, never rewritten; the row of the current second is the only one a check updates, and a
-- new second starts a new row. Nothing here grows with the hour or walks the rows of the hour.
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
    v_win_id      bigint;
    v_sec         bigint;
    v_last_sec    bigint;
    v_through     bigint := 0;
    v_first_sec   bigint;
    v_first_from  bigint;
    v_total       bigint := 0;
    v_need        bigint;
    v_free_sec    bigint;
BEGIN
    admitted := 0;
    IF p_api_key IS NOT NULL THEN
        SELECT r.id INTO v_win_id FROM rate_limit_windows r WHERE r.api_key_id = p_api_key FOR UPDATE;
        IF NOT FOUND THEN
            INSERT INTO rate_limit_windows (api_key_id) VALUES (p_api_key) ON CONFLICT DO NOTHING;
            SELECT r.id INTO v_win_id FROM rate_limit_windows r WHERE r.api_key_id = p_api_key FOR UPDATE;
        END IF;
    ELSE
        -- A member's window is shared by all of the member's tokens and sessions and the
        -- assistant endpoints.
        SELECT r.id INTO v_win_id
          FROM rate_limit_windows r WHERE r.workspace_id = p_workspace AND r.user_id = p_user FOR UPDATE;
        IF NOT FOUND THEN
            INSERT INTO rate_limit_windows (workspace_id, user_id) VALUES (p_workspace, p_user) ON CONFLICT DO NOTHING;
            SELECT r.id INTO v_win_id
              FROM rate_limit_windows r WHERE r.workspace_id = p_workspace AND r.user_id = p_user FOR UPDATE;
        END IF;
    END IF;

    -- The time is read after the lock is held, so admissions are recorded in lock order and the
    -- seconds only grow; a clock stepping backwards is folded into the newest second. (Each
    -- statement below takes its snapshot after the lock, so it sees what the previous holder
    -- committed; reading the seconds in the locking statement would not.)
    v_sec := floor(extract(epoch FROM clock_timestamp()))::bigint;
    -- The newest second (its running total) and the first second still inside the window (the
    -- running count before it), in one statement. An admission in second s may lie inside
    -- (t - window, t] for some t of the current second iff s >= v_sec - window: those seconds are
    -- counted, older ones no longer.
    SELECT l.second, l.through, f.second, f.admitted_before INTO v_last_sec, v_through, v_first_sec, v_first_from
      FROM (SELECT s.second, s.admitted_before + s.admitted AS through
              FROM rate_limit_seconds s WHERE s.window_id = v_win_id ORDER BY s.second DESC LIMIT 1) l
      LEFT JOIN LATERAL (SELECT s.second, s.admitted_before
                           FROM rate_limit_seconds s
                          WHERE s.window_id = v_win_id AND s.second >= greatest(l.second, v_sec) - p_window
                          ORDER BY s.second LIMIT 1) f ON true;
    IF NOT FOUND THEN
        v_through := 0;
    ELSIF v_last_sec > v_sec THEN
        v_sec := v_last_sec;
    END IF;
    now_epoch := v_sec;
    IF v_first_sec IS NOT NULL THEN
        v_total := v_through - v_first_from;
    END IF;

    IF p_count > 0 THEN
        admitted := least(p_count, greatest(p_limit - v_total, 0));
        IF admitted > 0 THEN
            IF v_last_sec = v_sec THEN
                UPDATE rate_limit_seconds SET admitted = admitted + wms_rate_window.admitted
                 WHERE window_id = v_win_id AND second = v_sec;
            ELSE
                INSERT INTO rate_limit_seconds (window_id, second, admitted, admitted_before)
                VALUES (v_win_id, v_sec, wms_rate_window.admitted, v_through);
                -- Once per second of traffic: the seconds that left the window go.
                DELETE FROM rate_limit_seconds WHERE window_id = v_win_id AND second < v_sec - p_window;
            END IF;
            v_total := v_total + admitted;
            v_first_sec := coalesce(v_first_sec, v_sec);
            v_first_from := coalesce(v_first_from, v_through);
        END IF;
        IF admitted < p_count THEN
            -- The earliest second whose leaving brings the count below p_limit: the first whose
            -- running total, counted from the window's start, reaches the excess.
            v_need := v_total - p_limit + 1;
            SELECT s.second INTO v_free_sec
              FROM rate_limit_seconds s
             WHERE s.window_id = v_win_id AND s.second >= v_first_sec
               AND s.admitted_before + s.admitted - v_first_from >= v_need
             ORDER BY s.second LIMIT 1;
            retry_after := greatest(1, coalesce(v_free_sec, v_sec) + p_window + 1 - v_sec)::integer;
        END IF;
    END IF;

    remaining := greatest(p_limit - v_total, 0)::integer;
    reset_after := CASE WHEN v_first_sec IS NULL THEN 0 ELSE greatest(1, v_first_sec + p_window + 1 - v_sec)::integer END;
    RETURN NEXT;
END;
$$;

-- One sliding-window function for every entry point: wms_authenticate (every credential check)
-- and wms_admit_member (the assistant endpoints) both count through wms_rate_window, which holds
-- the window arithmetic once. Same signatures and answers as before.
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
-- The live definition of wms_authenticate(): the one place it is written (see ../README.md).
CREATE OR REPLACE FUNCTION wms_authenticate(p_kind text, p_digest bytea, p_plans text[], p_limit integer, p_window integer,
                                 p_count integer DEFAULT 1, p_client text DEFAULT NULL)
RETURNS TABLE (
    outcome       text,
    credential_id bigint,
    workspace_id  bigint,
    plan          text,
    user_id       bigint,
    role          text,
    remaining     integer,
    reset_after   integer,
    retry_after   integer,
    now_epoch     bigint,
    admitted      integer
)
LANGUAGE plpgsql
AS $$
#variable_conflict use_column
DECLARE
    v_now        timestamptz := clock_timestamp();
    v_revoked    timestamptz;
    v_expires    timestamptz;
    v_last_used  timestamptz;
    v_ws_active  boolean;
    v_mem_active boolean;
    v_admit      boolean;
    v_ws         bigint;
    v_user       bigint;
BEGIN
    IF p_count IS NULL OR p_count < 1 THEN
        RAISE EXCEPTION 'p_count must be at least 1, got %', p_count;
    END IF;
    admitted := 0;
    -- The window rows are a counter, not a ledger: if PostgreSQL itself crashes, losing the last
    -- few hundred milliseconds of admissions is acceptable, and not waiting for the WAL flush
    -- while holding the window row's lock is what lets one busy key reach thousands of requests
    -- per second (docs/rate-limit.md).
    PERFORM set_config('synchronous_commit', 'off', true);

    IF p_kind = 'api_key' THEN
        SELECT k.id, k.workspace_id, w.plan, NULL::bigint, NULL::text, k.revoked_at, k.expires_at,
               k.last_used_at, w.is_active, true
          INTO credential_id, workspace_id, plan, user_id, role, v_revoked, v_expires,
               v_last_used, v_ws_active, v_mem_active
          FROM api_keys k JOIN workspaces w ON w.id = k.workspace_id
         WHERE k.key_digest = p_digest;
    ELSIF p_kind = 'user' THEN
        SELECT t.id, t.workspace_id, w.plan, t.user_id, m.role, t.revoked_at, t.expires_at,
               t.last_used_at, w.is_active, m.is_active
          INTO credential_id, workspace_id, plan, user_id, role, v_revoked, v_expires,
               v_last_used, v_ws_active, v_mem_active
          FROM user_tokens t
          JOIN workspace_members m ON m.workspace_id = t.workspace_id AND m.user_id = t.user_id
          JOIN workspaces w ON w.id = t.workspace_id
         WHERE t.token_digest = p_digest;
    ELSE
        RAISE EXCEPTION 'unknown credential kind %', p_kind;
    END IF;

    now_epoch := floor(extract(epoch FROM v_now))::bigint;
    IF credential_id IS NULL THEN
        outcome := 'unknown';
        RETURN NEXT;
        RETURN;
    END IF;
    -- A rolled key's revocation lies in the future until its grace period ends: it works until then.
    IF v_revoked IS NOT NULL AND v_revoked <= v_now THEN
        outcome := 'revoked';
    ELSIF v_expires IS NOT NULL AND v_expires <= v_now THEN
        outcome := 'expired';
    ELSIF NOT v_mem_active THEN
        outcome := 'member_inactive';
    ELSIF NOT v_ws_active THEN
        outcome := 'workspace_inactive';
    END IF;
    IF outcome IS NOT NULL THEN
        RETURN NEXT;
        RETURN;
    END IF;

    -- last_used_at at most once a minute, and a key's last_used_ip (p_client, the request's address)
    -- with it, so the address costs no write of its own. Taken before the window row's lock, in the same order
    -- (credential row, then window row) as a deletion cascading to the window, so the two never
    -- deadlock.
    IF v_last_used IS NULL OR v_last_used < v_now - interval '1 minute' THEN
        IF p_kind = 'api_key' THEN
            UPDATE api_keys SET last_used_at = v_now, last_used_ip = coalesce(p_client, last_used_ip)
             WHERE id = credential_id AND (last_used_at IS NULL OR last_used_at < v_now - interval '1 minute');
        ELSE
            UPDATE user_tokens SET last_used_at = v_now
             WHERE id = credential_id AND (last_used_at IS NULL OR last_used_at < v_now - interval '1 minute');
        END IF;
    END IF;

    v_admit := p_plans IS NULL OR plan = ANY (p_plans);
    outcome := CASE WHEN v_admit THEN 'ok' ELSE 'plan_required' END;
    admitted := 0;
    IF p_limit IS NULL THEN
        IF v_admit THEN
            admitted := p_count;
        END IF;
        RETURN NEXT;
        RETURN;
    END IF;

    -- The window (wms_rate_window), taken after the credential row, in the same order as a
    -- deletion cascading to the window, so the two never deadlock. A caller refused for its plan
    -- counts nothing. A login token counts against its member's window.
    v_ws := workspace_id;
    v_user := user_id;
    SELECT w.admitted, w.remaining, w.reset_after, w.retry_after, w.now_epoch
      INTO admitted, remaining, reset_after, retry_after, now_epoch
      FROM wms_rate_window(CASE WHEN p_kind = 'api_key' THEN credential_id END, v_ws, v_user, p_limit, p_window,
                           CASE WHEN v_admit THEN p_count ELSE 0 END) w;
    IF v_admit AND admitted = 0 THEN
        outcome := 'limited';
    END IF;
    RETURN NEXT;
END;
$$;
--! include functions/wms_admit_member.sql sha256:85fbd198e237df9a

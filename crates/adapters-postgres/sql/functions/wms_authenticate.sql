-- The live definition of wms_authenticate(): the one place it is written (see ../README.md).
-- It reads the credential's facts (its row, its workspace and plan, the membership), writes what
-- a check writes (last use, the window) and reports; it refuses nothing for the plan or the
-- limit. `p_plans` are the plans whose requests count (the domain's policy names them); a
-- credential of a workspace on another plan is reported `uncounted`, and the domain decides the
-- answer (`domain::identity`); which of the `p_count` requests the window admitted is `admitted`,
-- and the domain spreads it (`domain::rate_limit::spread`).
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
    v_counted    boolean;
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

    v_counted := p_plans IS NULL OR plan = ANY (p_plans);
    outcome := CASE WHEN v_counted THEN 'ok' ELSE 'uncounted' END;
    admitted := 0;
    IF p_limit IS NULL THEN
        IF v_counted THEN
            admitted := p_count;
        END IF;
        RETURN NEXT;
        RETURN;
    END IF;

    -- The window (wms_rate_window), taken after the credential row, in the same order as a
    -- deletion cascading to the window, so the two never deadlock. An uncounted request counts
    -- nothing. A login token counts against its member's window.
    v_ws := workspace_id;
    v_user := user_id;
    SELECT w.admitted, w.remaining, w.reset_after, w.retry_after, w.now_epoch
      INTO admitted, remaining, reset_after, retry_after, now_epoch
      FROM wms_rate_window(CASE WHEN p_kind = 'api_key' THEN credential_id END, v_ws, v_user, p_limit, p_window,
                           CASE WHEN v_counted THEN p_count ELSE 0 END) w;
    RETURN NEXT;
END;
$$;

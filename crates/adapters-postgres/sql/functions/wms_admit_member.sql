-- The live definition of wms_admit_member(): the one place it is written (see ../README.md).
-- Counts p_count requests of a member against the member's window (the assistant endpoints, for
-- a login token or a session), for a caller that already knows the member is active: the window
-- is wms_rate_window's. admitted of p_count were admitted (the first ones); retry_after is set
-- when some were refused.
CREATE OR REPLACE FUNCTION wms_admit_member(p_workspace bigint, p_user bigint, p_limit integer, p_window integer,
                                 p_count integer DEFAULT 1)
RETURNS TABLE (
    admitted    integer,
    remaining   integer,
    reset_after integer,
    retry_after integer,
    now_epoch   bigint
)
LANGUAGE plpgsql
AS $$
BEGIN
    IF p_count IS NULL OR p_count < 1 THEN
        RAISE EXCEPTION 'p_count must be at least 1, got %', p_count;
    END IF;
    -- The window row is a counter, not a ledger (wms_authenticate says why).
    PERFORM set_config('synchronous_commit', 'off', true);
    RETURN QUERY SELECT * FROM wms_rate_window(NULL, p_workspace, p_user, p_limit, p_window, p_count);
END;
$$;

-- The live definition of country_day_stats_on_delete(): the one place it is written (see ../README.md).
-- Deleted `contact_day_stats` rows (a rebuild, or a channel's or contact's cascade) subtracted from
-- the top-countries summary.
CREATE OR REPLACE FUNCTION country_day_stats_on_delete() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    -- Paused while a time zone change rebuilds the rollup: the summary is rebuilt once after it.
    IF current_setting('wms.country_day_stats_paused', true) = 'on' THEN
        RETURN NULL;
    END IF;
    PERFORM country_day_stats_apply(ARRAY(
        SELECT ROW(o.workspace_id, o.channel_id, o.day, o.contact_id, -o.messages, -o.inbound, -o.sent,
                   -o.delivered, -o.read, -o.failed)::contact_day_stats
        FROM old_rows o
        WHERE o.messages <> 0 OR o.inbound <> 0 OR o.sent <> 0 OR o.delivered <> 0 OR o.read <> 0
           OR o.failed <> 0));
    RETURN NULL;
END $$;

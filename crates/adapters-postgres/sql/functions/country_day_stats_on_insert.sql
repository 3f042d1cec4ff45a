-- The live definition of country_day_stats_on_insert(): the one place it is written (see ../README.md).
-- New `contact_day_stats` rows (a contact's first messages on a channel and day) added to the
-- top-countries summary.
CREATE OR REPLACE FUNCTION country_day_stats_on_insert() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    -- Paused while a time zone change rebuilds the rollup: the summary is rebuilt once after it.
    IF current_setting('wms.country_day_stats_paused', true) = 'on' THEN
        RETURN NULL;
    END IF;
    PERFORM country_day_stats_apply(ARRAY(
        SELECT ROW(n.workspace_id, n.channel_id, n.day, n.contact_id, n.messages, n.inbound, n.sent,
                   n.delivered, n.read, n.failed)::contact_day_stats
        FROM new_rows n
        WHERE n.messages <> 0 OR n.inbound <> 0 OR n.sent <> 0 OR n.delivered <> 0 OR n.read <> 0 OR n.failed <> 0));
    RETURN NULL;
END $$;

-- The live definition of country_day_stats_on_update(): the one place it is written (see ../README.md).
-- Changed `contact_day_stats` rows: the new figures minus the old, per row.
CREATE OR REPLACE FUNCTION country_day_stats_on_update() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    -- Paused while a time zone change rebuilds the rollup: the summary is rebuilt once after it.
    IF current_setting('wms.country_day_stats_paused', true) = 'on' THEN
        RETURN NULL;
    END IF;
    PERFORM country_day_stats_apply(ARRAY(
        SELECT ROW(d.workspace_id, d.channel_id, d.day, d.contact_id, sum(d.messages)::int,
                   sum(d.inbound)::int, sum(d.sent)::int, sum(d.delivered)::int, sum(d.read)::int,
                   sum(d.failed)::int)::contact_day_stats
        FROM (SELECT n.workspace_id, n.channel_id, n.day, n.contact_id, n.messages, n.inbound, n.sent,
                     n.delivered, n.read, n.failed
              FROM new_rows n
              UNION ALL
              SELECT o.workspace_id, o.channel_id, o.day, o.contact_id, -o.messages, -o.inbound, -o.sent,
                     -o.delivered, -o.read, -o.failed
              FROM old_rows o) d
        GROUP BY d.workspace_id, d.channel_id, d.day, d.contact_id
        HAVING sum(d.messages) <> 0 OR sum(d.inbound) <> 0 OR sum(d.sent) <> 0 OR sum(d.delivered) <> 0
            OR sum(d.read) <> 0 OR sum(d.failed) <> 0));
    RETURN NULL;
END $$;

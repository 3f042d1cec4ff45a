-- The live definition of country_day_stats_pause(): the one place it is written (see ../README.md).
-- Before a workspace's time zone changes: the `contact_day_stats` rebuild that follows (every row
-- of the workspace deleted and inserted again) would pass each row through the summary's triggers;
-- instead they stand aside for this transaction until `country_day_stats_on_time_zone()` rebuilds
-- the summary once from the new rows (a third of the time at 1M messages).
CREATE OR REPLACE FUNCTION country_day_stats_pause() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM set_config('wms.country_day_stats_paused', 'on', true);
    RETURN NEW;
END $$;

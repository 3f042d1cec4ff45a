-- The live definition of country_day_stats_on_time_zone(): the one place it is written (see ../README.md).
-- After a workspace's time zone changed and its `contact_day_stats` rows were rebuilt (that
-- trigger's name sorts first, so it has run): the summary rebuilt from them, and its triggers back.
CREATE OR REPLACE FUNCTION country_day_stats_on_time_zone() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM country_day_stats_rebuild(NEW.id);
    PERFORM set_config('wms.country_day_stats_paused', 'off', true);
    RETURN NULL;
END $$;

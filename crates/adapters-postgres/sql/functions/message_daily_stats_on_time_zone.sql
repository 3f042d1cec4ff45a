-- The live definition of message_daily_stats_on_time_zone(): the one place it is written (see ../README.md).
CREATE OR REPLACE FUNCTION message_daily_stats_on_time_zone() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM message_daily_stats_rebuild(NEW.id);
    RETURN NULL;
END $$;

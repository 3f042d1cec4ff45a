-- The live definition of contact_day_stats_on_time_zone(): the one place it is written (see ../README.md).
CREATE OR REPLACE FUNCTION contact_day_stats_on_time_zone() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM contact_day_stats_rebuild(NEW.id);
    RETURN NULL;
END $$;

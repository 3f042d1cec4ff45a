-- The live definition of wms_is_time_zone(): the one place it is written (see ../README.md).
-- A time zone PostgreSQL understands, written as an IANA name ("UTC", "America/Sao_Paulo").
-- The rollup's day boundaries depend on the workspace's zone, so an unknown name must never get
-- in: it would make every message write of the workspace fail.
CREATE OR REPLACE FUNCTION wms_is_time_zone(tz text) RETURNS boolean
LANGUAGE plpgsql STABLE AS $$
BEGIN
    PERFORM now() AT TIME ZONE tz;
    -- POSIX strings such as "UTC+3" are accepted by PostgreSQL with the sign inverted; refuse them.
    RETURN tz ~ '^[A-Za-z][A-Za-z_]*(/[A-Za-z0-9_+-]+)*$';
EXCEPTION WHEN invalid_parameter_value THEN
    RETURN false;
END $$;

-- The live definition of country_day_stats_on_country(): the one place it is written (see ../README.md).
-- A contact's country changes (an edit, an import, erasure clearing it): its counts and figures in
-- the top-countries summary move from the country they were counted under to the new one. The
-- contact's activity rows are locked first, so figures a concurrent transaction adds are either
-- committed and moved here, or added afterwards under the new country.
CREATE OR REPLACE FUNCTION country_day_stats_on_country() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    moved_to text := coalesce(upper(nullif(btrim(NEW.country), '')), '');
BEGIN
    PERFORM 1 FROM contact_activity a WHERE a.contact_id = NEW.id ORDER BY a.scope_id FOR UPDATE;
    INSERT INTO country_day_stats AS s (workspace_id, scope_id, day, country, slot, contacts)
    SELECT a.workspace_id, a.scope_id, a.last_day, v.country, (a.contact_id % 4)::smallint, v.n
    FROM contact_activity a
    CROSS JOIN LATERAL (VALUES (a.country, -1), (moved_to, 1)) v (country, n)
    WHERE a.contact_id = NEW.id AND a.last_day IS NOT NULL AND a.country <> moved_to
    ORDER BY 1, 2, 3, 4, 5
    ON CONFLICT (workspace_id, scope_id, day, country, slot) DO UPDATE
        SET contacts = s.contacts + excluded.contacts;
    INSERT INTO country_day_stats AS s (workspace_id, scope_id, day, country, slot,
                                        inbound, sent, delivered, read, failed)
    SELECT c.workspace_id, c.channel_id, c.day, v.country, (c.contact_id % 4)::smallint,
           v.n * c.inbound, v.n * c.sent, v.n * c.delivered, v.n * c.read, v.n * c.failed
    FROM contact_day_stats c
    JOIN contact_activity a ON a.contact_id = c.contact_id AND a.scope_id = c.channel_id
    CROSS JOIN LATERAL (VALUES (a.country, -1), (moved_to, 1)) v (country, n)
    WHERE c.contact_id = NEW.id AND a.country <> moved_to
      AND (c.inbound <> 0 OR c.sent <> 0 OR c.delivered <> 0 OR c.read <> 0 OR c.failed <> 0)
    ORDER BY 1, 2, 3, 4, 5
    ON CONFLICT (workspace_id, scope_id, day, country, slot) DO UPDATE
        SET inbound = s.inbound + excluded.inbound, sent = s.sent + excluded.sent,
            delivered = s.delivered + excluded.delivered, read = s.read + excluded.read,
            failed = s.failed + excluded.failed;
    UPDATE contact_activity SET country = moved_to WHERE contact_id = NEW.id AND country <> moved_to;
    RETURN NULL;
END $$;

-- The live definition of country_day_stats_rebuild(bigint): the one place it is written (see ../README.md).
-- Recomputes one workspace's top-countries summary from its `contact_day_stats` rows and its
-- contacts' countries (the migration's backfill, or by hand).
CREATE OR REPLACE FUNCTION country_day_stats_rebuild(ws bigint) RETURNS void
LANGUAGE sql AS $$
    DELETE FROM country_day_stats WHERE workspace_id = ws;
    DELETE FROM contact_activity WHERE workspace_id = ws;
    INSERT INTO contact_activity (contact_id, scope_id, workspace_id, country, last_day)
    SELECT c.contact_id, s.scope_id, c.workspace_id, coalesce(upper(nullif(btrim(k.country), '')), ''), max(c.day)
    FROM contact_day_stats c
    JOIN contacts k ON k.id = c.contact_id AND k.workspace_id = c.workspace_id
    JOIN channels ch ON ch.id = c.channel_id AND ch.workspace_id = c.workspace_id
    CROSS JOIN LATERAL (VALUES (ch.id), (CASE WHEN ch.channel_type = 'whatsapp' THEN 0 END)) s (scope_id)
    WHERE c.workspace_id = ws AND c.messages > 0 AND s.scope_id IS NOT NULL
    GROUP BY 1, 2, 3, 4;
    INSERT INTO country_day_stats (workspace_id, scope_id, day, country, slot,
                                   contacts, inbound, sent, delivered, read, failed)
    SELECT u.workspace_id, u.scope_id, u.day, u.country, u.slot, sum(u.contacts), sum(u.inbound),
           sum(u.sent), sum(u.delivered), sum(u.read), sum(u.failed)
    FROM (SELECT a.workspace_id, a.scope_id, a.last_day AS day, a.country, (a.contact_id % 4)::smallint AS slot,
                 1 AS contacts, 0 AS inbound, 0 AS sent, 0 AS delivered, 0 AS read, 0 AS failed
          FROM contact_activity a
          WHERE a.workspace_id = ws
          UNION ALL
          SELECT c.workspace_id, c.channel_id, c.day, a.country, (c.contact_id % 4)::smallint,
                 0, c.inbound, c.sent, c.delivered, c.read, c.failed
          FROM contact_day_stats c
          JOIN contact_activity a ON a.contact_id = c.contact_id AND a.scope_id = c.channel_id
          WHERE c.workspace_id = ws AND c.messages > 0) u
    GROUP BY 1, 2, 3, 4, 5;
$$;

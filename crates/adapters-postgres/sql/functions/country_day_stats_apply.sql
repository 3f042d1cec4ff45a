-- The live definition of country_day_stats_apply(contact_day_stats[]): the one place it is written (see ../README.md).
-- Applies changes of `contact_day_stats` (one statement's, as signed differences: a row's figures
-- added, or subtracted when negative) to the top-countries summary: `contact_activity` (each
-- contact's latest day with messages, per channel and over all WhatsApp channels, with the country
-- it is counted under) and `country_day_stats` (per scope, day, country and slot: the contacts whose
-- latest day that is, and the messages' figures). Keys are written in order so that concurrent
-- transactions lock rows in the same order. Nothing is written for a workspace being deleted.
--
-- Planned once per connection for any number of rows (a generic plan: index lookups per row),
-- without JIT: re-planning each call for the array at hand cost more than the work for the
-- single-message statements that are most of the calls (`docs/benchmarks.md`, "Top countries").
CREATE OR REPLACE FUNCTION country_day_stats_apply(d contact_day_stats[]) RETURNS void
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
SET jit = off
AS $$
BEGIN
    IF cardinality(d) = 0 THEN
        RETURN;
    END IF;
    -- A contact's first messages in a scope give it an activity row with the country its record
    -- has now. The record is locked first (shared), so a concurrent country change either waits
    -- for this transaction and then finds the rows to move, or committed before and is read here.
    PERFORM 1 FROM contacts k
    WHERE k.id IN (SELECT x.contact_id FROM unnest(d) x
                   WHERE x.messages > 0
                     AND NOT EXISTS (SELECT 1 FROM contact_activity a
                                     WHERE a.contact_id = x.contact_id AND a.scope_id = x.channel_id))
    ORDER BY k.id
    FOR SHARE;
    INSERT INTO contact_activity (contact_id, scope_id, workspace_id, country)
    SELECT DISTINCT x.contact_id, s.scope_id, x.workspace_id, coalesce(upper(nullif(btrim(k.country), '')), '')
    FROM unnest(d) x
    JOIN contacts k ON k.id = x.contact_id AND k.workspace_id = x.workspace_id
    JOIN channels ch ON ch.id = x.channel_id AND ch.workspace_id = x.workspace_id
    CROSS JOIN LATERAL (VALUES (ch.id), (CASE WHEN ch.channel_type = 'whatsapp' THEN 0 END)) s (scope_id)
    WHERE x.messages > 0 AND s.scope_id IS NOT NULL
    ORDER BY 1, 2
    ON CONFLICT (contact_id, scope_id) DO NOTHING;
    -- Every activity row of the statement's contacts, locked: the country on it is the one their
    -- figures are added under, and a country change moves them under the same lock.
    PERFORM 1 FROM contact_activity a
    WHERE a.contact_id IN (SELECT x.contact_id FROM unnest(d) x)
    ORDER BY a.contact_id, a.scope_id
    FOR UPDATE;
    -- The messages' figures, per channel (the figures of all WhatsApp channels are their sum).
    INSERT INTO country_day_stats AS s (workspace_id, scope_id, day, country, slot,
                                        inbound, sent, delivered, read, failed)
    SELECT x.workspace_id, x.channel_id, x.day, a.country, (x.contact_id % 4)::smallint,
           sum(x.inbound), sum(x.sent), sum(x.delivered), sum(x.read), sum(x.failed)
    FROM unnest(d) x
    JOIN contact_activity a ON a.contact_id = x.contact_id AND a.scope_id = x.channel_id
    WHERE EXISTS (SELECT 1 FROM workspaces w WHERE w.id = x.workspace_id)
    GROUP BY 1, 2, 3, 4, 5
    HAVING sum(x.inbound) <> 0 OR sum(x.sent) <> 0 OR sum(x.delivered) <> 0 OR sum(x.read) <> 0
        OR sum(x.failed) <> 0
    ORDER BY 1, 2, 3, 4, 5
    ON CONFLICT (workspace_id, scope_id, day, country, slot) DO UPDATE
        SET inbound = s.inbound + excluded.inbound, sent = s.sent + excluded.sent,
            delivered = s.delivered + excluded.delivered, read = s.read + excluded.read,
            failed = s.failed + excluded.failed;
    -- Latest days: recomputed from the contact's rows where they may have moved (messages removed,
    -- or added on a day after the latest); a contact whose latest day changes leaves that day's
    -- count for the new one's, and one without messages left in a scope loses its activity row
    -- there. Another message on a day already counted changes nothing and reads nothing.
    WITH fresh AS (
        SELECT a.contact_id, a.scope_id, a.workspace_id, a.country, a.last_day AS old_day,
               (SELECT max(c.day) FROM contact_day_stats c
                WHERE c.contact_id = a.contact_id AND c.messages > 0
                  AND (c.channel_id = a.scope_id
                       OR (a.scope_id = 0 AND c.channel_id IN (SELECT ch.id FROM channels ch
                                                               WHERE ch.workspace_id = a.workspace_id
                                                                 AND ch.channel_type = 'whatsapp')))) AS new_day
        FROM contact_activity a
        WHERE a.contact_id IN (SELECT x.contact_id FROM unnest(d) x
                               WHERE x.messages < 0
                                  OR (x.messages > 0
                                      AND NOT EXISTS (SELECT 1 FROM contact_activity l
                                                      WHERE l.contact_id = x.contact_id AND l.scope_id = x.channel_id
                                                        AND l.last_day >= x.day)))
    ), changed AS (
        SELECT * FROM fresh WHERE old_day IS DISTINCT FROM new_day
    ), moved AS (
        UPDATE contact_activity a SET last_day = c.new_day
        FROM changed c
        WHERE a.contact_id = c.contact_id AND a.scope_id = c.scope_id AND c.new_day IS NOT NULL
    ), emptied AS (
        DELETE FROM contact_activity a
        USING changed c
        WHERE a.contact_id = c.contact_id AND a.scope_id = c.scope_id AND c.new_day IS NULL
    )
    INSERT INTO country_day_stats AS s (workspace_id, scope_id, day, country, slot, contacts)
    SELECT m.workspace_id, m.scope_id, m.day, m.country, m.slot, sum(m.n)
    FROM (SELECT workspace_id, scope_id, old_day AS day, country, (contact_id % 4)::smallint AS slot, -1 AS n
          FROM changed WHERE old_day IS NOT NULL
          UNION ALL
          SELECT workspace_id, scope_id, new_day, country, (contact_id % 4)::smallint, 1
          FROM changed WHERE new_day IS NOT NULL) m
    WHERE EXISTS (SELECT 1 FROM workspaces w WHERE w.id = m.workspace_id)
    GROUP BY 1, 2, 3, 4, 5
    HAVING sum(m.n) <> 0
    ORDER BY 1, 2, 3, 4, 5
    ON CONFLICT (workspace_id, scope_id, day, country, slot) DO UPDATE
        SET contacts = s.contacts + excluded.contacts;
END $$;

-- The live definition of conversation_rollup_rows(): the one place it is written (see ../README.md).
-- What one conversation fact adds to `conversation_rollups` (`sign` 1) or takes from it (-1): for
-- each block level (1, 4, 16 and 64 days, aligned on 1970-01-01, of the fact's UTC day), each
-- measure (0 wall-clock, 1 business seconds) and each grouping (0 none, 1 the fact's user, 2 its
-- team, 3 its channel, 4 each label in `labels`), one delta counting the fact in the bucket of its
-- duration (-1 for a fact without one). With `fact_groups` false only the label deltas: a thread
-- gaining or losing a label.
CREATE OR REPLACE FUNCTION conversation_rollup_rows(
    workspace_id bigint, kind smallint, at timestamptz, seconds bigint, business_seconds bigint,
    user_id bigint, team_id bigint, channel_id bigint, labels bigint[], fact_groups boolean, sign integer)
RETURNS SETOF conversation_rollup_delta
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT workspace_id, l.level, day0 + (d - d % l.days), m.measure, g.dim, g.key, kind,
           coalesce(conversation_bucket(m.v), -1::smallint), sign::bigint, sign * coalesce(m.v, 0)
    FROM (SELECT DATE '1970-01-01' AS day0, (at AT TIME ZONE 'UTC')::date - DATE '1970-01-01' AS d) t
    CROSS JOIN (VALUES (0::smallint, 1), (1::smallint, 4), (2::smallint, 16), (3::smallint, 64)) l (level, days)
    CROSS JOIN (VALUES (0::smallint, seconds), (1::smallint, business_seconds)) m (measure, v)
    CROSS JOIN (SELECT 0::smallint, 0::bigint WHERE fact_groups
                UNION ALL SELECT 1::smallint, user_id WHERE fact_groups AND user_id IS NOT NULL
                UNION ALL SELECT 2::smallint, team_id WHERE fact_groups AND team_id IS NOT NULL
                UNION ALL SELECT 3::smallint, channel_id WHERE fact_groups
                UNION ALL SELECT 4::smallint, label FROM unnest(labels) AS label) g (dim, key)
$$;

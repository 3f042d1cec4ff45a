-- The live definition of conversation_counts_add(): the one place it is written (see ../README.md).
-- Two histograms of `conversation_rollups.counts` added element by element.
CREATE OR REPLACE FUNCTION conversation_counts_add(a integer[], b integer[]) RETURNS integer[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN a IS NULL THEN b WHEN b IS NULL THEN a
                ELSE (SELECT array_agg(coalesce(a[i], 0) + coalesce(b[i], 0) ORDER BY i)
                      FROM generate_series(1, greatest(cardinality(a), cardinality(b))) i) END
$$;

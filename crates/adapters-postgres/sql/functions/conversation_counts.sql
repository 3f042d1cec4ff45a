-- The live definition of conversation_counts(): the one place it is written (see ../README.md).
-- The dense histogram of `conversation_rollups.counts` from (bucket, count) pairs: element b + 1
-- holds bucket b's count, up to the highest bucket given; NULL without any bucket of 0 or more.
CREATE OR REPLACE FUNCTION conversation_counts(buckets smallint[], ns bigint[]) RETURNS integer[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT array_agg(coalesce(c.n, 0)::integer ORDER BY i)
    FROM generate_series(0, (SELECT max(b) FROM unnest(buckets) b)) i
    LEFT JOIN (SELECT b, sum(n) AS n FROM unnest(buckets, ns) u (b, n) GROUP BY b) c ON c.b = i
$$;

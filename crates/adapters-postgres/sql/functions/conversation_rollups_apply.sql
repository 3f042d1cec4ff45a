-- The live definition of conversation_rollups_apply(): the one place it is written (see ../README.md).
-- Adds deltas (negative to subtract) to `conversation_rollups`: per row, the count and total
-- seconds, and each bucket's count to the row's histogram. Deltas of a workspace being deleted
-- are dropped: its rows go with it (their foreign key's cascade).
CREATE OR REPLACE FUNCTION conversation_rollups_apply(delta conversation_rollup_delta[]) RETURNS void
LANGUAGE sql AS $$
    INSERT INTO conversation_rollups AS r (workspace_id, level, block, measure, dim, key, kind, n, total, counts)
    SELECT d.workspace_id, d.level, d.block, d.measure, d.dim, d.key, d.kind, sum(d.n), sum(d.total),
           conversation_counts(array_agg(d.bucket), array_agg(d.n))
    FROM (SELECT workspace_id, level, block, measure, dim, key, kind, bucket, sum(n)::bigint AS n, sum(total)::bigint AS total
          FROM unnest(delta)
          GROUP BY workspace_id, level, block, measure, dim, key, kind, bucket
          HAVING sum(n) <> 0 OR sum(total) <> 0) d
    WHERE EXISTS (SELECT 1 FROM workspaces w WHERE w.id = d.workspace_id)
    GROUP BY d.workspace_id, d.level, d.block, d.measure, d.dim, d.key, d.kind
    -- In key order, so two writers of the same rows never wait on each other in a cycle.
    ORDER BY 1, 2, 3, 4, 5, 6, 7
    ON CONFLICT (workspace_id, measure, dim, level, block, key, kind)
    DO UPDATE SET n = r.n + excluded.n, total = r.total + excluded.total,
                  counts = conversation_counts_add(r.counts, excluded.counts)
$$;

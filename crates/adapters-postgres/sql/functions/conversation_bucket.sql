-- The live definition of conversation_bucket(): the one place it is written (see ../README.md).
-- The value bucket of a report duration in `conversation_rollups`: each second below 32 s is a
-- bucket of its own, then each bucket is 10 % wider than the one before (about 170 buckets up to a
-- year). Only its order matters: a longer duration never lands in a lower bucket, so a nearest-rank
-- percentile lies in the bucket where the running count reaches its rank, and the report reads the
-- facts of that one bucket (indexes `conversation_facts_wall_rank`, `_business_rank`).
CREATE OR REPLACE FUNCTION conversation_bucket(seconds bigint) RETURNS smallint
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN seconds < 32 THEN greatest(seconds, 0)::smallint
                ELSE (32 + floor(ln(seconds::float8 / 32) / ln(1.1)))::smallint END
$$;

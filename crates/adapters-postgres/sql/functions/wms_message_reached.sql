-- The live definition of wms_message_reached(): the one place it is written (see ../README.md).
-- The delivery funnel of an outbound message, the one definition every rollup and report counts
-- by: a message that reached a stage also counts in every stage before it, so `delivered`
-- includes `read` and `sent` includes both (docs/assistant.md, "Speed: the rollups"). `queued`
-- and `failed` reach no stage. Inlined by the planner (a single immutable expression).
CREATE OR REPLACE FUNCTION wms_message_reached(status text, stage text) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE stage
               WHEN 'sent' THEN status IN ('sent', 'delivered', 'read')
               WHEN 'delivered' THEN status IN ('delivered', 'read')
               WHEN 'read' THEN status = 'read'
           END
$$;

-- The live definition of webhook_events_floor_key(): the one place it is written (see ../README.md).
-- The advisory lock key of an event writer's floor (`docs/webhooks.md`, "The events feed"): a
-- 24-bit tag in the high bits ('WWW'), the floor in the low 40 bits (a trillion events), so other
-- advisory locks of wms are not mistaken for floors.
CREATE OR REPLACE FUNCTION webhook_events_floor_key(floor bigint) RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$ SELECT (x'575757'::bigint << 40) | floor $$;

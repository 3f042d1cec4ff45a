-- Static header values are sealed at rest like the signing secret (docs/secrets.md): the
-- `{name: value}` object sealed for its row; `headers` keeps the names with blank values. SQL does
-- not know the key, so rows written before keep their values in `headers` until `wms serve` seals
-- them at start (or `wms secrets rotate-key` does): `adapters_postgres::sealed::seal_plain_headers`.
ALTER TABLE webhook_destinations ADD COLUMN headers_encrypted bytea;

-- Webhook URLs kept before wms reduced them to origin and path (`domain::webhooks::public_url`):
-- the `webhook.created` audit records (kept a year, readable with `audit:read` alone) and the
-- `webhook.disabled` events (in the feed and replays) may hold a credential in the URL's
-- user-info, query or fragment. The same cut here: query and fragment first, then whatever sits
-- between `scheme://` and an `@` before the first `/`.
UPDATE audit_events
SET details = jsonb_set(details, '{url}', to_jsonb(
        regexp_replace(regexp_replace(details ->> 'url', '[?#].*$', ''), '^([A-Za-z][A-Za-z0-9+.-]*://)[^/@]*@', '\1')))
WHERE action LIKE 'webhook.%' AND jsonb_typeof(details -> 'url') = 'string'
  AND (details ->> 'url') ~ '[?#]|^[A-Za-z][A-Za-z0-9+.-]*://[^/@]*@';

UPDATE webhook_events
SET payload = jsonb_set(payload::jsonb, '{data,url}', to_jsonb(
        regexp_replace(regexp_replace(payload::jsonb #>> '{data,url}', '[?#].*$', ''), '^([A-Za-z][A-Za-z0-9+.-]*://)[^/@]*@', '\1')))::text
WHERE event_type = 'webhook.disabled' AND NOT sample
  AND (payload::jsonb #>> '{data,url}') ~ '[?#]|^[A-Za-z][A-Za-z0-9+.-]*://[^/@]*@';

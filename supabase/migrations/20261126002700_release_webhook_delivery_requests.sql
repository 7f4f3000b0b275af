-- What: app_private.release_webhook_deliveries.request_sha256, the SHA-256
-- (lower-case hex) of the request a delivery was: "<METHOD> <target>\n<body>",
-- the bytes its signature covers (docs/test-builds.md, "What CI signs").
-- Why: a webhook-id already recorded was taken as a retry whatever came with
-- it, so a second, different request under the same id (an Android publish
-- after the iOS one of the same CI run, a rollback of release B with the id
-- of a change of A, rollout 100 after rollout 50) answered 200 with what the
-- first one did and wrote nothing. The api function now answers a recorded id
-- as a retry only when the request is the same one; another request is 400
-- (webhook_id_reused) and writes nothing
-- (functions/api/releases/release-store.ts). Deliveries recorded before this
-- have no hash: they are taken as retries, as before.
-- Rollback: supabase/rollbacks/20261126002700_release_webhook_delivery_requests.down.sql

alter table app_private.release_webhook_deliveries
  add column request_sha256 text constraint release_webhook_deliveries_request_sha256_hex check (request_sha256 ~ '^[0-9a-f]{64}$');
comment on column app_private.release_webhook_deliveries.request_sha256 is
  'SHA-256 (hex) of the signed request ("<METHOD> <target>\n<body>"): the same webhook-id with another request is refused (400 webhook_id_reused), not answered as a retry. Null for deliveries recorded before it was kept (taken as retries).';
comment on table app_private.release_webhook_deliveries is
  'Each Standard Webhooks delivery (webhook-id) applied to releases, once: a retried delivery (the same request) answers with the release it made or changed, and changes nothing; another request with the same webhook-id is refused.';

-- Down step of 20261126002700_release_webhook_delivery_requests.sql: the
-- request hash goes, and with it the table's comment of before.
alter table app_private.release_webhook_deliveries drop column if exists request_sha256;
comment on table app_private.release_webhook_deliveries is
  'Each Standard Webhooks delivery (webhook-id) applied to releases, once: a retried delivery answers with the release it made or changed, and changes nothing.';

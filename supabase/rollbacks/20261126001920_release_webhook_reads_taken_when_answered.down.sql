-- Down step of 20261126001920_release_webhook_reads_taken_when_answered.sql:
-- the comments as 20261126001400_release_webhook_reads.sql wrote them.
comment on table app_private.release_webhook_reads is
  'The webhook-id of each signed read of the release manager (GET /v1/releases/{id}/feedback), taken once: a second request with it is a replay. Kept only while its webhook-timestamp could still pass.';
comment on policy "Release managers can record read ids" on app_private.release_webhook_reads is
  'Each signed read records its webhook-id, once.';

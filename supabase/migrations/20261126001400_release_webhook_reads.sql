-- What: app_private.release_webhook_reads, the webhook-id of every signed read
-- of the release manager (GET /v1/releases/{id}/feedback), each taken once.
-- Why: a signed request changes nothing when it is a read, so no delivery
-- record (release_webhook_deliveries) holds its webhook-id, and the same
-- headers passed again for as long as their timestamp was within the
-- tolerance. The api function inserts the id before it reads (an id already
-- here is a replay: 401) and forgets ids signed long enough ago that their
-- timestamp can never pass again (functions/api/releases/release-store.ts,
-- claimWebhookRead). docs/test-builds.md tells CI what it signs.
--
-- Down step: supabase/rollbacks/20261126001400_release_webhook_reads.down.sql.

create table app_private.release_webhook_reads (
  webhook_id text primary key constraint release_webhook_reads_id_length check (char_length(webhook_id) between 1 and 255),
  signed_at timestamptz not null,
  received_at timestamptz not null default now()
);
comment on table app_private.release_webhook_reads is
  'The webhook-id of each signed read of the release manager (GET /v1/releases/{id}/feedback), taken once: a second request with it is a replay. Kept only while its webhook-timestamp could still pass.';
comment on column app_private.release_webhook_reads.signed_at is 'The request''s webhook-timestamp: once it is older than the tolerance (twice, for the clocks), the id is forgotten.';

create index release_webhook_reads_signed_at_idx on app_private.release_webhook_reads (signed_at);
comment on index app_private.release_webhook_reads_signed_at_idx is 'Forgetting the ids whose timestamp can no longer pass.';

alter table app_private.release_webhook_reads enable row level security;
revoke all on app_private.release_webhook_reads from public, anon, authenticated, service_role;
grant select, insert, delete on app_private.release_webhook_reads to service_role;

create policy "Release managers can read their read ids"
  on app_private.release_webhook_reads for select to service_role using (true);
create policy "Release managers can record read ids"
  on app_private.release_webhook_reads for insert to service_role with check (true);
create policy "Release managers can forget expired read ids"
  on app_private.release_webhook_reads for delete to service_role using (true);
comment on policy "Release managers can read their read ids" on app_private.release_webhook_reads is 'The release manager''s bookkeeping (insert … on conflict do nothing returning).';
comment on policy "Release managers can record read ids" on app_private.release_webhook_reads is 'Each signed read records its webhook-id, once.';
comment on policy "Release managers can forget expired read ids" on app_private.release_webhook_reads is 'Ids whose timestamp can no longer pass are deleted.';

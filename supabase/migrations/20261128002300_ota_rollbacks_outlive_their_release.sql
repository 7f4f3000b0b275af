-- What: app_private.release_past_rollbacks, per (platform, channel, runtime
-- version) of OTA updates, the time of the latest rollback that the releases no
-- longer show: the rolled-back release was made active (or paused) again, or
-- deleted. A trigger on app_private.releases writes it, as the release leaves
-- `rolled_back` (its updated_at then: the time of its latest rollback, as the
-- Expo manifest reads it from a rolled-back release). The Expo manifest endpoint
-- takes the later of that and what the rolled-back releases show.
-- Why: expo-updates gives the embedded bundle the commitTime of the
-- rollBackToEmbedded it took (one millisecond after the rollback) and then
-- takes only a manifest whose createdAt is later. Once no rolled-back release
-- remained, the server no longer knew when that rollback was: the update made
-- active again, or an older one offered again, was served as published, older
-- than that directive, and the devices the rollback had sent to their embedded
-- bundle never took it (docs/test-builds.md, Rollback).
-- Only releases write it: no API role has a privilege but reading it, as the
-- releases are read (channels the caller may receive), so it says nothing of
-- a channel the caller may not see. One row per runtime version ever rolled
-- back and undone; it is configuration, not a user's data.
-- Tests: pgTAP 404-release-past-rollbacks; tests/integration/expo-updates.test.ts.
-- Down step: supabase/rollbacks/20261128002300_ota_rollbacks_outlive_their_release.down.sql

create table app_private.release_past_rollbacks (
  platform text not null,
  channel text not null,
  runtime_version text not null,
  rolled_back_at timestamptz not null,
  constraint release_past_rollbacks_pkey primary key (channel, platform, runtime_version)
);
comment on table app_private.release_past_rollbacks is
  'Per (platform, channel, runtime version) of OTA updates: the latest rollback no rolled-back release shows any more (made active or paused again, or deleted). The Expo manifest serves an update offered after it later than the rollBackToEmbedded of that rollback (docs/test-builds.md, Rollback). Written only by the trigger releases_20_remember_past_rollback.';
comment on column app_private.release_past_rollbacks.rolled_back_at is
  'The updated_at the rolled-back release had as it left rolled_back: its latest rollback (or change while rolled back), the newest of those of the key.';

alter table app_private.release_past_rollbacks enable row level security;
revoke all on app_private.release_past_rollbacks from public, anon, authenticated, service_role;
grant select on app_private.release_past_rollbacks to anon, authenticated;

create policy "Callers can read past rollbacks of channels they may receive"
  on app_private.release_past_rollbacks for select to anon, authenticated
  using (channel = any ((select app_private.receivable_release_channels())::text[]));
comment on policy "Callers can read past rollbacks of channels they may receive" on app_private.release_past_rollbacks is
  'As the releases of the channel are read (the Expo manifest endpoint, anon too): nothing about a channel the caller may not receive.';

create function app_private.remember_past_rollback()
returns trigger
language plpgsql
-- The table is written by this trigger only: no role that changes releases holds a privilege on it.
security definer
set search_path = ''
as $function$
begin
  -- Still rolled back (its rollout changed, say): the releases show it.
  if tg_op = 'UPDATE' and new.status = 'rolled_back' then
    return null;
  end if;
  insert into app_private.release_past_rollbacks as p (platform, channel, runtime_version, rolled_back_at)
  values (old.platform, old.channel, old.runtime_version, old.updated_at)
  on conflict (channel, platform, runtime_version)
    do update set rolled_back_at = greatest(p.rolled_back_at, excluded.rolled_back_at);
  return null;
end
$function$;
comment on function app_private.remember_past_rollback() is
  'AFTER UPDATE/DELETE trigger of app_private.releases: an OTA release leaving rolled_back (made active or paused again, or deleted) leaves the time of its latest rollback (old.updated_at) in app_private.release_past_rollbacks.';
revoke all on function app_private.remember_past_rollback() from public, anon, authenticated, service_role;

create trigger releases_20_remember_past_rollback
  after update or delete on app_private.releases
  for each row
  when (old.kind = 'ota' and old.status = 'rolled_back')
  execute function app_private.remember_past_rollback();

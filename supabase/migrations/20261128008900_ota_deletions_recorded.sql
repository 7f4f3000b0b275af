-- What: app_private.release_deletions, one row per deleted OTA update: the release's id,
-- platform, channel, runtime version and created_at, and when it was deleted. A trigger on
-- app_private.releases writes it as an OTA release is deleted. And
-- app_private.ota_update_hidden(…), which tells the Expo manifest endpoint only whether a
-- device's update id names an OTA update the server has, or had, that the caller may not see.
-- Why: without a record of deletions the endpoint took every update id it could not name as
-- deleted, and withdrew it as of the request: a freshly signed rollBackToEmbedded for any
-- made-up id (a proxy or CDN could replay one to every device: its body names no channel,
-- runtime version or update), and an app that switched channel at run time was sent back to
-- its embedded bundle. Now a device's update is withdrawn only when its deletion is recorded
-- (as of that deletion: every request about it gets the same answer) or when the caller may
-- no longer see it (a tester signed out or removed from the group, as before); any other id
-- is kept (docs/test-builds.md, Deleted).
-- Callers read deletions as they read the releases (channels they may receive), so they learn
-- nothing of a channel they may not; ota_update_hidden answers a yes or no about the ids the
-- device names, which only a device that was served them knows. Like
-- release_past_rollbacks, it is configuration, not a user's data: kept until the owner
-- deletes it, one row per OTA update ever deleted (docs/retention.md).
-- Tests: pgTAP 152-release-deletions; tests/integration/expo-updates.test.ts.
-- Down step: supabase/rollbacks/20261128008900_ota_deletions_recorded.down.sql

create table app_private.release_deletions (
  release_id uuid not null,
  platform text not null,
  channel text not null,
  runtime_version text not null,
  created_at timestamptz not null,
  deleted_at timestamptz not null,
  constraint release_deletions_pkey primary key (release_id)
);
comment on table app_private.release_deletions is
  'One row per deleted OTA update (app_private.releases of kind ota). The Expo manifest endpoint withdraws the update a device runs as of its deletion, and an update id it never had not at all (docs/test-builds.md, Deleted). Written only by the trigger releases_30_record_ota_deletion; kept until the owner deletes it.';
comment on column app_private.release_deletions.release_id is
  'The deleted release''s id (the update id expo-updates reports, or the release a republished id names by its first bytes: a range of this key).';
comment on column app_private.release_deletions.created_at is
  'The deleted release''s created_at: the createdAt it was served with as published.';
comment on column app_private.release_deletions.deleted_at is
  'When it was deleted (the deleting transaction''s time): the commitTime of the rollBackToEmbedded that withdraws it.';

alter table app_private.release_deletions enable row level security;
revoke all on app_private.release_deletions from public, anon, authenticated, service_role;
grant select on app_private.release_deletions to anon, authenticated;

create policy "Callers can read deletions of channels they may receive"
  on app_private.release_deletions for select to anon, authenticated
  using (channel = any ((select app_private.receivable_release_channels())::text[]));
comment on policy "Callers can read deletions of channels they may receive" on app_private.release_deletions is
  'As the releases of the channel are read (the Expo manifest endpoint, anon too): nothing about a channel the caller may not receive.';

create function app_private.record_ota_deletion()
returns trigger
language plpgsql
-- Security invoker: only the owner deletes releases (no API role holds DELETE on them), and a
-- role that may delete one but not record it is refused, so no deletion goes unrecorded.
set search_path = ''
as $function$
begin
  -- A release restored with its id and deleted again: its latest deletion.
  insert into app_private.release_deletions as d (release_id, platform, channel, runtime_version, created_at, deleted_at)
  values (old.id, old.platform, old.channel, old.runtime_version, old.created_at, now())
  on conflict (release_id) do update
    set platform = excluded.platform, channel = excluded.channel, runtime_version = excluded.runtime_version,
        created_at = excluded.created_at, deleted_at = excluded.deleted_at;
  return null;
end
$function$;
comment on function app_private.record_ota_deletion() is
  'AFTER DELETE trigger of app_private.releases: a deleted OTA release leaves its id, platform, channel, runtime version, created_at and the time of its deletion in app_private.release_deletions.';
revoke all on function app_private.record_ota_deletion() from public, anon, authenticated, service_role;

create trigger releases_30_record_ota_deletion
  after delete on app_private.releases
  for each row
  when (old.kind = 'ota')
  execute function app_private.record_ota_deletion();

create function app_private.ota_update_hidden(p_platform text, p_runtime_version text, p_first_ids uuid[], p_last_ids uuid[])
returns boolean
language sql
stable
-- It reads releases and deletions the caller may not see, and answers only whether there are any.
security definer
set search_path = ''
as $function$
  select exists (
    select 1
      from unnest(p_first_ids, p_last_ids) as r (first_id, last_id)
     where exists (select 1 from app_private.releases x
                    where x.id between r.first_id and r.last_id
                      and x.kind = 'ota' and x.platform = p_platform and x.runtime_version = p_runtime_version
                      and x.channel <> all ((select app_private.receivable_release_channels())::text[]))
        or exists (select 1 from app_private.release_deletions d
                    where d.release_id between r.first_id and r.last_id
                      and d.platform = p_platform and d.runtime_version = p_runtime_version
                      and d.channel <> all ((select app_private.receivable_release_channels())::text[])))
$function$;
comment on function app_private.ota_update_hidden(text, text, uuid[], uuid[]) is
  'Whether an OTA update of this platform and runtime version whose id lies in one of the ranges [p_first_ids[i], p_last_ids[i]] exists, or was deleted, on a channel the caller may not receive: the update a device runs that its tester may no longer see (signed out, removed from the group), which the Expo manifest endpoint withdraws. Answers only yes or no.';
revoke all on function app_private.ota_update_hidden(text, text, uuid[], uuid[]) from public, anon, authenticated, service_role;
grant execute on function app_private.ota_update_hidden(text, text, uuid[], uuid[]) to anon, authenticated;

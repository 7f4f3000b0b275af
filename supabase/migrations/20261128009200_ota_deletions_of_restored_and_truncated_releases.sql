-- What: app_private.release_deletions holds the OTA releases deleted and not restored: a
-- release inserted again with the id of a deleted one (restored by the owner, from a backup
-- say) drops that deletion (trigger releases_40_forget_restored_deletion), and the rows of
-- releases that exist again are dropped now. TRUNCATE of app_private.releases (CASCADE, as
-- feedback and webhook deliveries refer to it) records what a DELETE of every row would: each
-- OTA release's deletion (record_ota_deletion) and, per runtime version, the latest rollback of
-- its rolled-back ones (remember_past_rollback), by statement triggers before it. The policy
-- comment of the releases says truthfully what a caller may learn of a release it may not see.
-- Why: a restored release was still withdrawn, as of its old deletion, from a device that asked
-- on another channel (an app that switched channel), although it exists on a channel the caller
-- may see. TRUNCATE fires no row trigger, so it recorded no deletion (the devices on those
-- updates kept them, their ids unknown to the server) and no past rollback (the devices that a
-- rollback sent to their embedded bundle no longer took an older update offered again). And
-- "any other release is indistinguishable from none" is not so since 20261128008900: the Expo
-- manifest endpoint withdraws the update a device runs when it is one of a channel the caller
-- may not receive (a tester signed out or removed from the group must leave it), so naming
-- such an update's id, which only a device it was served to knows, tells that it exists, and
-- its platform and runtime version (docs/security-model.md, docs/test-builds.md, Deleted).
-- Tests: pgTAP 152-release-deletions; tests/integration/expo-updates.test.ts.
-- Down step: supabase/rollbacks/20261128009200_ota_deletions_of_restored_and_truncated_releases.down.sql

create or replace function app_private.record_ota_deletion()
returns trigger
language plpgsql
-- Security invoker: only the owner deletes (or truncates) releases (no API role holds DELETE or
-- TRUNCATE on them), and a role that may delete one but not record it is refused, so no deletion
-- goes unrecorded.
set search_path = ''
as $function$
begin
  -- The deleted row, or before a TRUNCATE (which fires no row trigger) every OTA release it deletes.
  -- A release restored with its id forgets its deletion (forget_restored_release_deletion): deleted
  -- again, the row is written anew; one the owner wrote meanwhile is replaced.
  insert into app_private.release_deletions as d (release_id, platform, channel, runtime_version, created_at, deleted_at)
  select r.id, r.platform, r.channel, r.runtime_version, r.created_at, now()
    from app_private.releases r
   where tg_op = 'TRUNCATE' and r.kind = 'ota'
  union all
  select old.id, old.platform, old.channel, old.runtime_version, old.created_at, now()
   where tg_op = 'DELETE'
  on conflict (release_id) do update
    set platform = excluded.platform, channel = excluded.channel, runtime_version = excluded.runtime_version,
        created_at = excluded.created_at, deleted_at = excluded.deleted_at;
  return null;
end
$function$;
comment on function app_private.record_ota_deletion() is
  'AFTER DELETE (per row) and BEFORE TRUNCATE (per statement) trigger of app_private.releases: a deleted OTA release leaves its id, platform, channel, runtime version, created_at and the time of its deletion in app_private.release_deletions; a TRUNCATE, every OTA release it deletes.';

create trigger releases_30_record_ota_truncation
  before truncate on app_private.releases
  for each statement
  execute function app_private.record_ota_deletion();

create or replace function app_private.remember_past_rollback()
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
  -- The row leaving rolled_back, or before a TRUNCATE (which fires no row trigger) every rolled-back
  -- OTA release it deletes: the latest of each key.
  insert into app_private.release_past_rollbacks as p (platform, channel, runtime_version, rolled_back_at)
  select r.platform, r.channel, r.runtime_version, max(r.updated_at)
    from (select x.platform, x.channel, x.runtime_version, x.updated_at
            from app_private.releases x
           where tg_op = 'TRUNCATE' and x.kind = 'ota' and x.status = 'rolled_back'
          union all
          select old.platform, old.channel, old.runtime_version, old.updated_at
           where tg_op <> 'TRUNCATE') as r
   group by r.platform, r.channel, r.runtime_version
  on conflict (channel, platform, runtime_version)
    do update set rolled_back_at = greatest(p.rolled_back_at, excluded.rolled_back_at);
  return null;
end
$function$;
comment on function app_private.remember_past_rollback() is
  'AFTER UPDATE/DELETE (per row) and BEFORE TRUNCATE (per statement) trigger of app_private.releases: an OTA release leaving rolled_back (made active or paused again, or deleted) leaves the time of its latest rollback (old.updated_at) in app_private.release_past_rollbacks; a TRUNCATE, the latest of the rolled-back OTA releases it deletes, per runtime version.';

create trigger releases_20_remember_past_rollback_on_truncate
  before truncate on app_private.releases
  for each statement
  execute function app_private.remember_past_rollback();

create function app_private.forget_restored_release_deletion()
returns trigger
language plpgsql
-- The release manager publishes (inserts) releases and holds no privilege on release_deletions.
security definer
set search_path = ''
as $function$
begin
  delete from app_private.release_deletions where release_id = new.id;
  return null;
end
$function$;
comment on function app_private.forget_restored_release_deletion() is
  'AFTER INSERT trigger of app_private.releases: a release inserted with the id of a deleted one (restored by the owner) exists again, and its deletion is forgotten (app_private.release_deletions); deleted again, it is recorded anew. A publish gets a new id, and forgets nothing.';
revoke all on function app_private.forget_restored_release_deletion() from public, anon, authenticated, service_role;

create trigger releases_40_forget_restored_deletion
  after insert on app_private.releases
  for each row
  execute function app_private.forget_restored_release_deletion();

-- Releases restored before this migration.
delete from app_private.release_deletions d
 where exists (select 1 from app_private.releases r where r.id = d.release_id);

comment on table app_private.release_deletions is
  'One row per deleted OTA update (app_private.releases of kind ota) that does not exist again. The Expo manifest endpoint withdraws the update a device runs as of its deletion, and an update id it never had not at all (docs/test-builds.md, Deleted). Written only by the triggers releases_30_record_ota_deletion (DELETE) and releases_30_record_ota_truncation (TRUNCATE); a release restored with its id drops its row (releases_40_forget_restored_deletion); else kept until the owner deletes it.';
comment on column app_private.release_deletions.deleted_at is
  'When it was deleted (the deleting transaction''s time): the commitTime of the rollBackToEmbedded that withdraws it (a millisecond later for a device served the update in that very millisecond).';

comment on policy "Callers can read releases of channels they may receive" on app_private.releases is
  'Testers see the releases of their groups'' channels; everyone (anon too) those of `everyone` channels. No other release can be read; but app_private.ota_update_hidden tells the Expo manifest endpoint whether an OTA update id a device names (which only a device it was served to knows) is one that exists, or was deleted, on a channel the caller may not receive, of the platform and runtime version asked about: naming such an id tells that (docs/security-model.md).';
comment on table app_private.release_past_rollbacks is
  'Per (platform, channel, runtime version) of OTA updates: the latest rollback no rolled-back release shows any more (made active or paused again, or deleted, also by TRUNCATE). The Expo manifest serves an update offered after it later than the rollBackToEmbedded of that rollback (docs/test-builds.md, Rollback). Written only by the triggers releases_20_remember_past_rollback and releases_20_remember_past_rollback_on_truncate.';

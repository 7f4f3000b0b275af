-- Down step of 20261128009200_ota_deletions_of_restored_and_truncated_releases.sql: TRUNCATE of
-- app_private.releases records no deletion nor past rollback again, and a release restored with
-- its id keeps its deletion (the triggers and functions as 20261128008900_ota_deletions_recorded.sql
-- and 20261128002300_ota_rollbacks_outlive_their_release.sql made them, with their comments); the
-- comments of release_deletions, release_past_rollbacks and of the releases' read policy as they
-- were. The deletions of restored releases dropped by the up step are not brought back.

drop trigger if exists releases_40_forget_restored_deletion on app_private.releases;
drop function if exists app_private.forget_restored_release_deletion();
drop trigger if exists releases_30_record_ota_truncation on app_private.releases;
drop trigger if exists releases_20_remember_past_rollback_on_truncate on app_private.releases;

create or replace function app_private.record_ota_deletion()
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
  insert into app_private.release_past_rollbacks as p (platform, channel, runtime_version, rolled_back_at)
  values (old.platform, old.channel, old.runtime_version, old.updated_at)
  on conflict (channel, platform, runtime_version)
    do update set rolled_back_at = greatest(p.rolled_back_at, excluded.rolled_back_at);
  return null;
end
$function$;
comment on function app_private.remember_past_rollback() is
  'AFTER UPDATE/DELETE trigger of app_private.releases: an OTA release leaving rolled_back (made active or paused again, or deleted) leaves the time of its latest rollback (old.updated_at) in app_private.release_past_rollbacks.';

comment on table app_private.release_deletions is
  'One row per deleted OTA update (app_private.releases of kind ota). The Expo manifest endpoint withdraws the update a device runs as of its deletion, and an update id it never had not at all (docs/test-builds.md, Deleted). Written only by the trigger releases_30_record_ota_deletion; kept until the owner deletes it.';
comment on column app_private.release_deletions.deleted_at is
  'When it was deleted (the deleting transaction''s time): the commitTime of the rollBackToEmbedded that withdraws it.';
comment on table app_private.release_past_rollbacks is
  'Per (platform, channel, runtime version) of OTA updates: the latest rollback no rolled-back release shows any more (made active or paused again, or deleted). The Expo manifest serves an update offered after it later than the rollBackToEmbedded of that rollback (docs/test-builds.md, Rollback). Written only by the trigger releases_20_remember_past_rollback.';

comment on policy "Callers can read releases of channels they may receive" on app_private.releases is
  'Testers see the releases of their groups'' channels; everyone (anon too) those of `everyone` channels. Any other release is indistinguishable from none.';

-- What: one OTA update per build number on a (platform, channel, runtime
-- version): the unique index releases_ota_build_key, beside binaries'
-- releases_binary_build_key. A database that already holds such duplicates
-- stops here with the list to resolve (below), and nothing changes.
-- Why: docs/test-builds.md and POST /v1/releases promised 400
-- already_published for a build number published before, but only binaries
-- had an index: the same OTA body sent twice (a CI re-run under new
-- webhook-ids) made two identical updates (201, 201). The Expo manifest
-- orders a runtime version's updates by build number, so two of one number
-- left "the newest" to their publication times, and a rollback of one still
-- offered its twin. The api function answers the index's refusal as it
-- answers binaries' (functions/api/releases/release-store.ts, publishRelease).
-- Rollback: supabase/rollbacks/20261126002710_ota_build_numbers_unique.down.sql

do $$
declare
  duplicates text;
begin
  select string_agg(format('%s/%s runtime %s build %s (%s updates)', platform, channel, runtime_version, build_number, n), '; ')
    into duplicates
    from (select platform, channel, runtime_version, build_number, count(*) as n
            from app_private.releases
           where kind = 'ota'
           group by platform, channel, runtime_version, build_number
          having count(*) > 1) d;
  if duplicates is not null then
    raise exception 'OTA updates share a build number on one (platform, channel, runtime version): %', duplicates
      using errcode = '23505',
            hint = 'Keep one of each (delete the others: delete from app_private.releases where id = ''…''), then apply this migration again.';
  end if;
end
$$;

create unique index releases_ota_build_key on app_private.releases (platform, channel, runtime_version, build_number) where kind = 'ota';
comment on index app_private.releases_ota_build_key is 'One OTA update per build number on a (platform, channel, runtime version).';
comment on column app_private.releases.build_number is
  'The build number (iOS CFBundleVersion, Android versionCode); "newer" means a higher build number. Unique per (platform, channel) among binaries, per (platform, channel, runtime version) among OTA updates.';

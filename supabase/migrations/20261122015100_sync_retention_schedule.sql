-- What: runs app_private.purge_sync_retention() every 5 minutes with pg_cron,
-- where pg_cron exists (Supabase: Database > Extensions > pg_cron).
-- Why: the retention window of api-v1.md needs a scheduled purge. Each run
-- purges at most one bounded batch (5000 op results + 5000 tombstones), so a
-- backlog drains over runs without long locks. Where pg_cron is not available
-- (plain Postgres, the local stand-in) this migration does nothing and an
-- operator runs `select * from app_private.purge_sync_retention()` as
-- service_role instead (docs/sync.md, "Retention").
-- If TIDESYNC_RETENTION_DAYS is changed from 30, reschedule the job with the
-- same value as its p_retention_days.
--
-- rollback:
--   do $$ begin
--     if exists (select 1 from pg_catalog.pg_extension where extname = 'pg_cron') then
--       perform cron.unschedule('tidesync-purge-sync-retention');
--     end if;
--   end $$;

do $$
begin
  if not exists (select 1 from pg_catalog.pg_extension where extname = 'pg_cron') then
    if not exists (select 1 from pg_catalog.pg_available_extensions where name = 'pg_cron') then
      raise notice 'pg_cron is not available here: the sync retention purge is not scheduled (run app_private.purge_sync_retention() yourself)';
      return;
    end if;
    begin
      create extension pg_cron with schema pg_catalog;
    exception when others then
      -- e.g. not in shared_preload_libraries, or this role may not create it.
      raise notice 'pg_cron could not be enabled (%): the sync retention purge is not scheduled', sqlerrm;
      return;
    end;
  end if;
  -- cron.schedule with a job name replaces an existing job of that name.
  execute $sql$
    select cron.schedule(
      'tidesync-purge-sync-retention',
      '*/5 * * * *',
      'select * from app_private.purge_sync_retention()'
    )
  $sql$;
end
$$;

-- Down step of 20261122010300_sync_retention.sql.
do $$
begin
  if exists (select 1 from pg_catalog.pg_extension where extname = 'pg_cron') then
    perform cron.unschedule(jobid) from cron.job where jobname = 'tidesync-purge-sync-retention';
  end if;
end
$$;
drop function if exists app_private.purge_sync_retention(timestamptz, integer, integer);

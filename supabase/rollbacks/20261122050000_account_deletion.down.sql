-- Down step of 20261122050000_account_deletion.sql.
do $$
begin
  if exists (select 1 from pg_catalog.pg_extension where extname = 'pg_cron') then
    perform cron.unschedule(jobid) from cron.job where jobname = 'tidesync-run-account-deletions';
  end if;
end
$$;
drop function if exists app_private.run_account_deletions(timestamptz, integer);
drop function if exists app_private.before_account_purge(uuid);
drop function if exists app_private.hand_over_lists(uuid);
drop trigger if exists devices_05_withhold_push_token_during_deletion on app_private.devices;
drop function if exists app_private.withhold_push_token_during_deletion();
drop function if exists app_private.cancel_account_deletion();
drop function if exists app_private.request_account_deletion(integer);
drop table if exists app_private.account_deletion_audit;
drop function if exists app_private.forbid_deletion_audit_rewrite();
drop table if exists app_private.account_deletion_requests;

-- Down step of 20261127000120_push_tokens_go_with_their_session.sql: push
-- tokens are kept again until the session row goes (the tokens the migration
-- and its sweep deleted stay deleted: the apps register them again at their
-- next session start).
do $$
begin
  if exists (select 1 from pg_catalog.pg_extension where extname = 'pg_cron') then
    perform cron.unschedule(jobid) from cron.job where jobname = 'tidesync-release-expired-push-tokens';
  end if;
end
$$;
-- auth.users belongs to Supabase Auth: the owner may create a trigger on it
-- but not drop one by name; dropping the trigger's function with CASCADE
-- drops the trigger on_auth_user_banned_release_push_tokens.
drop function app_private.release_push_tokens_of_banned_user() cascade;
drop function app_private.release_ended_push_tokens(uuid);
drop function app_private.release_expired_push_tokens();

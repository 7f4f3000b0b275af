-- What: the live-records quota (api-v1.md "live records per user": 100,000)
-- is held and enforced by the database:
--   - app_private.max_live_records_per_user() is the one place the number
--     lives; `npm run generate` copies it into MAX_LIVE_RECORDS_PER_USER
--     (functions/_shared/sync-quota.generated.ts), the function's limit and
--     what GET /v1/meta publishes;
--   - a trigger on app_private.sync_usage (the count the sync triggers keep
--     per creator: rows of synced tables the user wrote, whoever's list they
--     are in) refuses a write as `authenticated` that takes a user's count
--     above it: SQLSTATE 23514 (check_violation), constraint
--     max_live_records_per_user, message "at most 100000 live records per
--     user; delete some first". PostgREST answers it 400 with that code and
--     message, so supabase-js gets `error.code === '23514'`; the push answers
--     the op QUOTA_EXCEEDED (functions/api/sync/db-refusal.ts), as its
--     planner does.
--   Only growth is refused, and only for `authenticated` (the transaction's
--   role, what PostgREST and the api function set; the check runs inside the
--   sync trigger, a security definer, whose current_user is the owner): the
--   owner's and service_role's writes (bulk imports, migrations, seeds,
--   support fixes) are exempt, and a user over the quota can always delete.
-- Why: the quota was the push planner's alone. A user inserting through the
--   Data API (supabase-js as `authenticated`) was unbounded (100,005 rows in
--   one insert), after which their own pushes of new records failed
--   QUOTA_EXCEEDED.
-- pgTAP 127-live-records-quota; tests/integration/sync-batch.test.ts (limits)
-- and push-refusal-answers.test.ts (the quota reached by a write the push
-- waited for).
-- Rollback: supabase/rollbacks/20261126002100_live_records_quota_in_database.down.sql

create function app_private.max_live_records_per_user()
returns integer
language sql
immutable
parallel safe
set search_path = ''
as $$
  select 100000
$$;
comment on function app_private.max_live_records_per_user() is
  'The live-records quota: rows of synced tables one user may have created and not deleted (app_private.sync_usage). Enforced for writes as authenticated by sync_usage_10_live_records_quota; npm run generate copies it into MAX_LIVE_RECORDS_PER_USER. Change it by replacing this function in a migration, then npm run generate.';
revoke all on function app_private.max_live_records_per_user() from public, anon, authenticated, service_role;

create function app_private.refuse_live_records_over_quota()
returns trigger
language plpgsql
security invoker
set search_path = ''
as $$
declare
  v_max integer;
begin
  if tg_op = 'UPDATE' and new.live_records <= old.live_records then
    return new; -- a delete (or nothing new): always allowed
  end if;
  v_max := app_private.max_live_records_per_user();
  -- current_setting('role') is the role the transaction set (SET ROLE / set_config, as PostgREST and the api
  -- function do), also inside the security definer sync trigger that writes this table.
  if new.live_records > v_max and current_setting('role') = 'authenticated' then
    raise exception 'at most % live records per user; delete some first', v_max
      using errcode = 'check_violation', constraint = 'max_live_records_per_user',
            schema = 'app_private', table = 'sync_usage',
            detail = format('This write would bring the rows you created in synced tables to %s (rows others created in your lists do not count).', new.live_records),
            hint = 'Delete records you created before adding new ones; changing existing records is not limited.';
  end if;
  return new;
end;
$$;
comment on function app_private.refuse_live_records_over_quota() is
  'Trigger of app_private.sync_usage: refuses (23514, constraint max_live_records_per_user) a write as authenticated that takes a user''s live records above app_private.max_live_records_per_user(). The owner and service_role are exempt (bulk imports); a decrease is always allowed.';
revoke all on function app_private.refuse_live_records_over_quota() from public, anon, authenticated, service_role;

create trigger sync_usage_10_live_records_quota
  before insert or update of live_records on app_private.sync_usage
  for each row execute function app_private.refuse_live_records_over_quota();
comment on trigger sync_usage_10_live_records_quota on app_private.sync_usage is
  'The live-records quota for writes as authenticated (Data API and pushes alike): app_private.max_live_records_per_user().';

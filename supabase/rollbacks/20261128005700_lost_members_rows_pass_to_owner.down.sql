-- Down step of 20261128005700_lost_members_rows_pass_to_owner: a member who
-- loses a list stays charged for the rows they created in it, as before.
-- Rows already handed stay the owner's (sync_records and sync_usage agree).

drop trigger usage_passes_to_list_owner on public.list_members;
drop function app_private.pass_lost_members_rows_to_owner();

create or replace function app_private.refuse_live_records_over_quota()
returns trigger
language plpgsql
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

comment on table app_private.sync_usage is 'Live rows each user created across all synced tables (the max_live_records_per_user quota). Kept by the sync triggers.';
alter table app_private.sync_usage
  drop constraint sync_usage_handed_over_transient,
  drop column handed_over;

create index sync_records_created_by_idx on app_private.sync_records (created_by);
comment on index app_private.sync_records_created_by_idx is
  'Account deletion: app_private.forget_deleted_creators() finds the rows a deleted user created.';
drop index app_private.sync_records_created_by_scope_idx;

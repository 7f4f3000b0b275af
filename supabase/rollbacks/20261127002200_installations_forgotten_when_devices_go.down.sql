-- Down step of 20261127002200_installations_forgotten_when_devices_go.sql: the
-- triggers on auth.users and their function as
-- 20261127001100_installations_forgotten_by_queue.sql made them; the trigger
-- on app_private.devices goes (ids it queued stay queued).
drop trigger devices_40_queue_installations_of_deleted on app_private.devices;
drop function app_private.queue_installations_of_deleted_devices();

-- auth.users belongs to Supabase Auth: dropping the function with CASCADE
-- drops its trigger.
drop function app_private.queue_installations_of_deleted_user() cascade;

create function app_private.queue_installations_of_deleted_user()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_user_id uuid := case when tg_op = 'DELETE' then old.id else new.id end;
begin
  -- By devices_user_installation_key; the devices go with a hard-deleted user.
  insert into app_private.installations_to_forget (installation_id)
  select d.installation_id from app_private.devices d where d.user_id = v_user_id
  on conflict (installation_id) do nothing;
  if tg_op = 'DELETE' then
    return old;
  end if;
  return null;
end;
$$;
comment on function app_private.queue_installations_of_deleted_user() is
  'Trigger (before delete on auth.users, and after update of deleted_at when it is first set; per row): queues the user''s installation ids in app_private.installations_to_forget, however the user is deleted. Not callable by any API role.';
revoke all on function app_private.queue_installations_of_deleted_user() from public, anon, authenticated, service_role;

create trigger on_auth_user_deleted_queue_installations
  before delete on auth.users
  for each row execute function app_private.queue_installations_of_deleted_user();

create trigger on_auth_user_soft_deleted_queue_installations
  after update of deleted_at on auth.users
  for each row
  when (old.deleted_at is null and new.deleted_at is not null)
  execute function app_private.queue_installations_of_deleted_user();

comment on table app_private.installations_to_forget is
  'Installation ids of deleted users (hard or soft), queued by a trigger on auth.users until app_private.forget_queued_installations() nulls them in sync_records.field_versions (run by run_account_deletions and purge_sync_retention). Emptied by that pass; read by no API role.';

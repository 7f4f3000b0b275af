-- What: an installation id is queued for forgetting (app_private.installations_to_forget)
-- whenever a device row goes, however it goes: pruned by the signed-out cap
-- (20261127000220), deleted with its user (the cascade of any delete from
-- auth.users), or deleted by hand. A statement trigger after delete on
-- app_private.devices (devices_40_queue_installations_of_deleted) queues the
-- deleted rows' installation ids. The trigger before a delete of auth.users
-- goes (that cascade now queues the same ids); the one on a soft delete
-- stays (a soft-deleted user keeps their device rows).
-- Why: the trigger on auth.users copied only the ids of the device rows still
-- there when the user was deleted. An installation pruned before (the user
-- signed in from more than 20 others since) kept its id on what it wrote, and
-- nothing ever forgot it, so a new account on that phone was linked to the
-- old account's writes. Once its row is gone the installation is no longer
-- the user's device, so its id is forgotten at once (the next pass, within 5
-- minutes), by the pass's own rule: kept while another user who can still
-- sign in registered it first (a shared phone).
-- Cost: pushes pay nothing (no index on sync_records; devices are not written
-- by a push). A delete of users queues what the old trigger queued, from the
-- rows the cascade deletes anyway instead of an index lookup; a session start
-- that prunes queues the pruned ids.
-- pgTAP 508.
--
-- Down step: supabase/rollbacks/20261127002200_installations_forgotten_when_devices_go.down.sql.

create function app_private.queue_installations_of_deleted_devices()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  insert into app_private.installations_to_forget (installation_id)
  select distinct g.installation_id from gone g
  on conflict (installation_id) do nothing;
  return null;
end;
$$;
comment on function app_private.queue_installations_of_deleted_devices() is
  'Trigger (after delete on app_private.devices, per statement): queues the deleted rows'' installation ids in app_private.installations_to_forget, whatever deleted them (the signed-out cap, the cascade of a user''s deletion). Not callable by any API role.';
revoke all on function app_private.queue_installations_of_deleted_devices() from public, anon, authenticated, service_role;

create trigger devices_40_queue_installations_of_deleted
  after delete on app_private.devices
  referencing old table as gone
  for each statement execute function app_private.queue_installations_of_deleted_devices();

-- auth.users belongs to Supabase Auth: the owner may create a trigger on it but
-- not drop one by name; dropping the triggers' function with CASCADE drops
-- both, and the soft delete's is created again.
drop function app_private.queue_installations_of_deleted_user() cascade;

create function app_private.queue_installations_of_deleted_user()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  -- By devices_user_installation_key; a soft-deleted user keeps the rows.
  insert into app_private.installations_to_forget (installation_id)
  select d.installation_id from app_private.devices d where d.user_id = new.id
  on conflict (installation_id) do nothing;
  return null;
end;
$$;
comment on function app_private.queue_installations_of_deleted_user() is
  'Trigger (after update of deleted_at on auth.users when it is first set, per row): queues a soft-deleted user''s installation ids in app_private.installations_to_forget (a hard delete queues them through the devices it deletes: queue_installations_of_deleted_devices). Not callable by any API role.';
revoke all on function app_private.queue_installations_of_deleted_user() from public, anon, authenticated, service_role;

create trigger on_auth_user_soft_deleted_queue_installations
  after update of deleted_at on auth.users
  for each row
  when (old.deleted_at is null and new.deleted_at is not null)
  execute function app_private.queue_installations_of_deleted_user();

comment on table app_private.installations_to_forget is
  'Installation ids whose device row went (pruned, or deleted with its user) or whose user was soft-deleted, queued by triggers on app_private.devices and auth.users until app_private.forget_queued_installations() nulls them in sync_records.field_versions (run by run_account_deletions and purge_sync_retention). Emptied by that pass; read by no API role.';

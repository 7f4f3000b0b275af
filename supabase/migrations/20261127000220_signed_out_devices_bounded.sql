-- What: a user keeps at most app_private.signed_out_devices_kept() (20)
-- signed-out devices: registering a new device (an insert into
-- app_private.devices, POST /v1/auth/session from an installation the user
-- has no row for) deletes the user's signed-out devices beyond the 20 most
-- recently signed out. Signed-in devices are never pruned.
-- Why: one row per (user, installation) and nothing ever deleted one before
-- the account went, so a client that signs in from new installation ids in a
-- loop (or a reinstall after reinstall) grew the user's rows without bound;
-- GET /v1/devices listed them all.
-- Nothing a user needs is lost: a pruned installation that signs in again is
-- registered again (201, a new device id; sync tells its writes by the
-- installation id, not the device row); feedback sent from it keeps its text
-- with device_id null (the foreign key's on delete set null).
-- pgTAP 308.
--
-- Down step: supabase/rollbacks/20261127000220_signed_out_devices_bounded.down.sql.

create function app_private.signed_out_devices_kept()
returns integer
language sql
immutable
parallel safe
set search_path = ''
as $$ select 20 $$;
comment on function app_private.signed_out_devices_kept() is
  'How many signed-out devices a user keeps (the most recently signed out); older ones are deleted when a new device is registered (docs/devices-and-sessions.md).';
revoke all on function app_private.signed_out_devices_kept() from public, anon, authenticated, service_role;

create function app_private.prune_signed_out_devices()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  -- Session starts of one user run in turn (lock_user_devices), so two never
  -- prune the same rows at once.
  delete from app_private.devices d
   where d.id in (select o.id from app_private.devices o
                   where o.user_id = new.user_id and o.revoked_at is not null
                   order by o.revoked_at desc, o.id desc
                  offset app_private.signed_out_devices_kept());
  return null;
end;
$$;
comment on function app_private.prune_signed_out_devices() is
  'Trigger (after insert on app_private.devices, per row): deletes the user''s signed-out devices beyond the signed_out_devices_kept() most recently signed out. Not callable by any API role.';
revoke all on function app_private.prune_signed_out_devices() from public, anon, authenticated, service_role;

create trigger devices_30_prune_signed_out
  after insert on app_private.devices
  for each row execute function app_private.prune_signed_out_devices();

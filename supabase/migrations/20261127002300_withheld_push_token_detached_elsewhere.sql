-- What: a push token withheld from a user with a pending account deletion
-- (trigger devices_05_withhold_push_token_during_deletion) is still detached
-- from every other device that holds it. The detaching is one function now,
-- app_private.detach_push_token(token, user, installation), which both the
-- withholding trigger and devices_20_release_push_token call; the withholding
-- function becomes security definer to reach the other holder, which is
-- usually another user's device (RLS hides it from the writer).
-- Why: triggers fire in name order, so devices_05 nulled the new token before
-- devices_20 could detach it elsewhere. User A's phone token, sent by user B
-- (deletion pending) signing in on the same phone, stayed on A's device: A's
-- notifications kept going to the phone B now uses. api-v1 says registering a
-- token elsewhere detaches it from the old device; withholding it only decides
-- that the new device does not keep it either.
-- Lock order as before (docs/devices-and-sessions.md, "Lock order"): the
-- user's device lock, then the token's lock, then the other device's row.
-- tests/integration/devices.test.ts ("a second user with a pending account
-- deletion"); pgTAP 301-devices pins the privileges.
-- Rollback: supabase/rollbacks/20261127002300_withheld_push_token_detached_elsewhere.down.sql

create function app_private.detach_push_token(p_push_token text, p_user_id uuid, p_installation_id uuid)
returns void
language plpgsql
security invoker
set search_path = ''
as $$
begin
  -- Serializes concurrent registrations of the same token, so the second one
  -- waits, then detaches the first instead of failing on the unique index. A
  -- session start holds it already (lock_device_registration, taken before
  -- any device row): then this is no wait.
  perform pg_catalog.pg_advisory_xact_lock(app_private.push_token_lock_key(p_push_token));
  -- The registering row is matched by (user_id, installation_id), not id: an
  -- upsert's BEFORE INSERT carries a fresh id while the row it will update
  -- already exists, and that row must not be modified behind its back.
  update app_private.devices d
     set push_token = null, push_provider = null
   where d.push_token = p_push_token
     and d.revoked_at is null
     and (d.user_id, d.installation_id) <> (p_user_id, p_installation_id);
end
$$;
comment on function app_private.detach_push_token(text, uuid, uuid) is
  'Clears push token p_push_token on every active device but user p_user_id''s on installation p_installation_id, under the token''s lock (push_token_lock_key): a token belongs to one device at a time, also when the registering device may not keep it. Called only by the security definer triggers release_push_token_elsewhere and withhold_push_token_during_deletion; no API role may run it.';
revoke all on function app_private.detach_push_token(text, uuid, uuid) from public, anon, authenticated, service_role;

create or replace function app_private.release_push_token_elsewhere()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  if new.push_token is null or (tg_op = 'UPDATE' and new.push_token is not distinct from old.push_token) then
    return new;
  end if;
  perform app_private.detach_push_token(new.push_token, new.user_id, new.installation_id);
  return new;
end
$$;

create or replace function app_private.withhold_push_token_during_deletion()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  if new.push_token is not null and new.session_id is not null then
    -- In turn with request_account_deletion (20261126001310).
    perform app_private.lock_user_devices(new.user_id);
    if exists (select 1 from app_private.account_deletion_requests r where r.user_id = new.user_id) then
      -- Not kept here, and held by no other device either: the phone now
      -- runs this user's session, so the old holder's pushes would reach it.
      if tg_op = 'INSERT' or new.push_token is distinct from old.push_token then
        perform app_private.detach_push_token(new.push_token, new.user_id, new.installation_id);
      end if;
      new.push_token := null;
      new.push_provider := null;
    end if;
  end if;
  return new;
end
$$;
comment on function app_private.withhold_push_token_during_deletion() is
  'BEFORE INSERT/UPDATE trigger of app_private.devices: while the device''s user has a pending account deletion, no push token is stored (notifications stop), and a token the device sends is still detached from any other device (detach_push_token). In turn with request_account_deletion (lock_user_devices), so neither misses the other. Security definer: the other holder may be another user''s device, which RLS hides.';

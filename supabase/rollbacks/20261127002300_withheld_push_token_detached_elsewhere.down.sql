-- Down step of 20261127002300_withheld_push_token_detached_elsewhere.sql: the
-- two trigger functions as 20261126001310 and 20261126001900 made them (a
-- withheld token stays on its other holder), without detach_push_token.
create or replace function app_private.withhold_push_token_during_deletion()
returns trigger
language plpgsql
security invoker
set search_path = ''
as $$
begin
  if new.push_token is not null and new.session_id is not null then
    -- In turn with request_account_deletion (see the migration's header).
    perform app_private.lock_user_devices(new.user_id);
    if exists (select 1 from app_private.account_deletion_requests r where r.user_id = new.user_id) then
      new.push_token := null;
      new.push_provider := null;
    end if;
  end if;
  return new;
end
$$;
comment on function app_private.withhold_push_token_during_deletion() is
  'BEFORE INSERT/UPDATE trigger of app_private.devices: while the device''s user has a pending account deletion, no push token is stored (notifications stop). In turn with request_account_deletion (lock_user_devices), so neither misses the other. Security invoker: the writer of a device row is its user, who may read their own request.';

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
  -- Serializes concurrent registrations of the same token, so the second one
  -- waits, then detaches the first instead of failing on the unique index. A
  -- session start holds it already (lock_device_registration, taken before
  -- any device row): then this is no wait.
  perform pg_catalog.pg_advisory_xact_lock(app_private.push_token_lock_key(new.push_token));
  -- The row itself is matched by (user_id, installation_id), not id: an
  -- upsert's BEFORE INSERT carries a fresh id while the row it will update
  -- already exists, and that row must not be modified behind its back.
  update app_private.devices d
  set push_token = null, push_provider = null
  where d.push_token = new.push_token
    and d.revoked_at is null
    and (d.user_id, d.installation_id) <> (new.user_id, new.installation_id);
  return new;
end
$$;

drop function app_private.detach_push_token(text, uuid, uuid);

-- Down step of 20261126001900_push_token_locks_before_device_rows.sql: the
-- release trigger's function as 20261122020200_devices.sql made it (its own
-- lock key), then the two functions go.
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
  -- waits, then detaches the first instead of failing on the unique index.
  perform pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtextextended('tidesync.push_token:' || new.push_token, 0));
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
drop function app_private.lock_device_registration(uuid, text);
drop function app_private.push_token_lock_key(text);

-- What: app_private.lock_device_registration(user_id, push_token), which a
-- session start (registerDevice, POST /v1/auth/session) takes first instead of
-- lock_user_devices alone: the user's device lock, then, when it stores a push
-- token, the lock of that token and of every token the user's devices hold,
-- in ascending key order, before it locks any device row. The token lock's key
-- is one function now, app_private.push_token_lock_key(text), which the
-- trigger devices_20_release_push_token (release_push_token_elsewhere) takes
-- too, unchanged otherwise.
-- Why: two users registering one push token at once (a shared phone) could
-- deadlock (40P01, answered 503). The start of the user whose device held the
-- token locked that device row (select … for update, the upsert), then waited
-- in the release trigger for the token's lock; the other user's start held
-- that lock and, to detach the token, waited for the same device row. Now the
-- token locks come before every row lock: a start waiting for a token lock
-- holds no device row, and a start holding a token lock only waits for rows
-- whose writers need no lock it holds, so the two run in turn and the later
-- one takes the token (docs/devices-and-sessions.md, "Shared phones and push
-- tokens", says why no cycle is left).
-- tests/integration/device-session-races.test.ts ("two users registering the
-- same push token at once"); pgTAP 301 pins the privileges.
-- Rollback: supabase/rollbacks/20261126001900_push_token_locks_before_device_rows.down.sql

create function app_private.push_token_lock_key(p_push_token text)
returns bigint
language sql
immutable
parallel safe
security invoker
set search_path = ''
as $$
  select pg_catalog.hashtextextended('tidesync.push_token:' || p_push_token, 0);
$$;
comment on function app_private.push_token_lock_key(text) is
  'The advisory lock key of push token p_push_token: registrations of one token run in turn (lock_device_registration, release_push_token_elsewhere). EXECUTE for authenticated (lock_device_registration runs as the caller).';
revoke all on function app_private.push_token_lock_key(text) from public, anon, authenticated, service_role;
grant execute on function app_private.push_token_lock_key(text) to authenticated;

create function app_private.lock_device_registration(p_user_id uuid, p_push_token text)
returns void
language plpgsql
volatile
security invoker
set search_path = ''
as $$
declare
  v_key bigint;
begin
  perform app_private.lock_user_devices(p_user_id);
  if p_push_token is null then
    -- Keeping or clearing a token detaches nothing: no token lock is needed.
    return;
  end if;
  -- The token it stores and those its devices hold (the ones it may replace
  -- or, moving a session, clear), in one order for everyone. Read under the
  -- user's lock (RLS: the caller's own devices); only this user's starts
  -- store a token on them, and a release elsewhere only clears one.
  for v_key in
    select distinct app_private.push_token_lock_key(t.push_token)
    from (select p_push_token as push_token
          union all
          select d.push_token from app_private.devices d where d.user_id = p_user_id and d.push_token is not null) t
    order by 1
  loop
    perform pg_catalog.pg_advisory_xact_lock(v_key);
  end loop;
end
$$;
comment on function app_private.lock_device_registration(uuid, text) is
  'Taken first by a session start of user p_user_id storing push token p_push_token (null: keeps or clears it): the user''s device lock (lock_user_devices), then the locks of p_push_token and of every token the user''s devices hold, in key order, so no device row is locked while a token lock is awaited (no deadlock between users registering one token). Held until the transaction ends. EXECUTE for authenticated (the api function) only.';
revoke all on function app_private.lock_device_registration(uuid, text) from public, anon, authenticated, service_role;
grant execute on function app_private.lock_device_registration(uuid, text) to authenticated;

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

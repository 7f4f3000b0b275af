-- Down step of 20261128002510_two_argument_device_lock_dropped.sql: the
-- two-argument lock_device_registration as migration 20261126001900 made it
-- (the down step of 20261128001300 has the three-argument form call it again).
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

-- Down step of 20261126002910_deletion_request_keeps_its_session.sql: the
-- request as 20261126001310_push_tokens_withheld_in_turn.sql made it (no
-- session check after the device lock).
create or replace function app_private.request_account_deletion(p_grace_days integer)
returns table (requested_at timestamptz, scheduled_for timestamptz)
language plpgsql
volatile
security definer
set search_path = ''
as $$
declare
  v_caller uuid := auth.uid();
  v_session uuid := nullif(auth.jwt() ->> 'session_id', '')::uuid;
  v_request uuid;
begin
  if v_caller is null or v_session is null then
    raise exception 'request_account_deletion needs a signed-in caller' using errcode = '42501';
  end if;
  if p_grace_days is null or p_grace_days < 1 then
    raise exception 'p_grace_days must be at least 1' using errcode = 'invalid_parameter_value';
  end if;
  -- In turn with the caller's device writes: the clearing below sees a token
  -- a session start stored meanwhile, or that start sees this request.
  perform app_private.lock_user_devices(v_caller);

  -- A second request keeps the first one's date: asking again never moves it.
  insert into app_private.account_deletion_requests as r (user_id, scheduled_for)
  values (v_caller, now() + make_interval(days => p_grace_days))
  on conflict (user_id) do nothing
  returning r.request_id into v_request;
  if v_request is not null then
    insert into app_private.account_deletion_audit (request_id, event, scheduled_for)
    select r.request_id, 'requested', r.scheduled_for from app_private.account_deletion_requests r where r.user_id = v_caller;
  end if;

  -- Every other session is signed out now (their refresh tokens cascade, their
  -- devices are revoked and lose their push tokens: 20261122020200_devices.sql).
  delete from auth.sessions s where s.user_id = v_caller and s.id <> v_session;
  -- The calling device stays signed in but receives nothing any more.
  update app_private.devices d set push_token = null, push_provider = null
   where d.user_id = v_caller and d.push_token is not null;

  return query
    select r.requested_at, r.scheduled_for from app_private.account_deletion_requests r where r.user_id = v_caller;
end
$$;
comment on function app_private.request_account_deletion(integer) is
  'POST /v1/users/me/deletion: schedules the caller''s account deletion p_grace_days from now (a pending request keeps its date), signs out every other session of the caller and clears the caller''s push tokens, in turn with the caller''s device writes (lock_user_devices); returns the request. Security definer (authenticated may not touch auth.sessions or write the request and audit tables); acts only on auth.uid(); EXECUTE for authenticated only.';

-- What: app_private.request_account_deletion() checks, once it holds the
-- caller's device lock, that the caller's session still exists; a session
-- signed out by a request that went first changes nothing and gets the
-- signed-out error (foreign_key_violation, which the api function answers
-- 401 UNAUTHENTICATED after finding the session gone, signedOutIfGone).
-- Why: two deletion requests of one user from two sessions at the same moment
-- both passed the function's session check, then took turns at the lock; the
-- second, after the first had signed its session out, deleted the first's
-- session in turn. Both answered 202 and both sessions were signed out,
-- although docs/account-deletion.md says the requesting session stays signed
-- in (to cancel, to export). Now the first answers 202 and keeps its session,
-- the second answers 401 like any request of a session signed out.
-- tests/integration/account-deletion.test.ts (two sessions requesting at once).
-- Rollback: supabase/rollbacks/20261126002910_deletion_request_keeps_its_session.down.sql

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
  -- Only now is the caller's session known to stand: a request of another
  -- session of the caller that went first (and committed while this one
  -- waited) signed it out. Then nothing happens here: the same answer as a
  -- write that meets a sign-out, a foreign key violation on a session that is
  -- gone, which the api function answers 401 (signedOutIfGone). A sign-out
  -- of this session still under way is not waited for (the request then
  -- goes first, as before).
  if not exists (select 1 from auth.sessions s where s.id = v_session and s.user_id = v_caller) then
    raise exception 'request_account_deletion: the calling session has been signed out'
      using errcode = 'foreign_key_violation';
  end if;

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
  'POST /v1/users/me/deletion: schedules the caller''s account deletion p_grace_days from now (a pending request keeps its date), signs out every other session of the caller and clears the caller''s push tokens, in turn with the caller''s device writes (lock_user_devices); returns the request. A caller whose session is gone once it has the lock (another session''s request signed it out meanwhile) changes nothing: foreign_key_violation, answered 401 by the api function. Security definer (authenticated may not touch auth.sessions or write the request and audit tables); acts only on auth.uid(); EXECUTE for authenticated only.';

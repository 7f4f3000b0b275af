-- What: a session start (registerDevice, POST /v1/auth/session) locks the
-- auth rows it will reference or delete before it locks any device row:
-- app_private.lock_device_registration(user_id, push_token, installation_id)
-- takes what the two-argument form takes (the user's device lock, then the
-- push token locks), then app_private.lock_registration_sessions(installation_id):
-- FOR KEY SHARE of the caller's auth.users row and session row (what binding
-- a device to them takes through the foreign keys) and, when the
-- installation's device runs another session of the caller (the one a new
-- sign-in on that installation signs out), of that session's row too. Only
-- then does the start lock device rows. FOR KEY SHARE is enough: a delete of
-- the row waits for it (a sign-out, a user deletion), the start's own later
-- delete of the old session does not, and Supabase Auth refreshing that
-- session (an update of other columns) is not held up by it. The two-argument
-- form stays as it was (an api function instance deployed before this
-- migration keeps calling it).
-- Why: a sign-out locks a session's row and then, through the foreign key's
-- on delete set null, its device's row (DELETE /v1/auth/session, DELETE
-- /v1/devices/{id}, supabase.auth.signOut(), an admin deleting sessions or
-- the user: a user's row, then its sessions, then their devices). The start
-- did the reverse: it locked the installation's device row (select … for
-- update, the upsert) and deleted the session that device ran before last
-- (revoke_session), and moving a session from another installation locked
-- that installation's device before the foreign key locked the session. A
-- new sign-in on an installation and a sign-out of the session it ran before
-- (or a reinstall keeping its session and a sign-out of that session) at the
-- same moment deadlocked: Postgres broke it (40P01) and one of them answered
-- 503. Now both wait in one order, user row, session rows, device rows, and
-- end as one after the other would (docs/devices-and-sessions.md, "Lock
-- order", says why no cycle is left).
-- Security definer, like revoke_session: authenticated has no right on
-- auth.users or auth.sessions. It locks only the caller's own rows
-- (auth.uid(), the token's session_id), returns nothing, EXECUTE for
-- authenticated only; it reads the device through its own filter on the
-- caller, not RLS.
-- tests/integration/sign-out-races.test.ts; pgTAP 301 pins the privileges.
-- Rollback: supabase/rollbacks/20261126002600_session_rows_before_device_rows.down.sql

create function app_private.lock_registration_sessions(p_installation_id uuid)
returns void
language plpgsql
volatile
security definer
set search_path = ''
as $$
declare
  v_caller uuid := auth.uid();
  v_session uuid := nullif(auth.jwt() ->> 'session_id', '')::uuid;
begin
  if v_caller is null or v_session is null then
    raise exception 'lock_registration_sessions needs a signed-in caller' using errcode = '42501';
  end if;
  -- What the device's user_id references: a user deletion (its row, then its
  -- sessions, then their devices) waits for the start or the start for it.
  perform from auth.users u where u.id = v_caller for key share;
  -- What the device's session_id will reference: a sign-out of the caller's
  -- own session waits for the start, or the start for it (then binding fails
  -- its foreign key: 401).
  perform from auth.sessions s where s.id = v_session and s.user_id = v_caller for key share;
  -- The session this installation ran before, which the start signs out: a
  -- sign-out of it waits for the start, or the start for it (then the start
  -- finds the device revoked and has nothing to sign out). Read under the
  -- user's device lock: only a sign-out changes it meanwhile (to null).
  perform from auth.sessions s
   where s.user_id = v_caller
     and s.id <> v_session
     and s.id = (select d.session_id from app_private.devices d
                  where d.user_id = v_caller and d.installation_id = p_installation_id)
     for key share;
end
$$;
comment on function app_private.lock_registration_sessions(uuid) is
  'Taken by a session start (lock_device_registration(uuid, text, uuid)) before it locks any device row: FOR KEY SHARE of the caller''s auth.users row, session row, and the other session of the caller that the caller''s device on p_installation_id runs (the one the start signs out), so a start and a sign-out lock session rows before device rows, in one order. Held until the transaction ends. Security definer (authenticated has no right on auth.users or auth.sessions); locks only the caller''s rows and returns nothing; EXECUTE for authenticated only.';
revoke all on function app_private.lock_registration_sessions(uuid) from public, anon, authenticated, service_role;
grant execute on function app_private.lock_registration_sessions(uuid) to authenticated;

create function app_private.lock_device_registration(p_user_id uuid, p_push_token text, p_installation_id uuid)
returns void
language plpgsql
volatile
security invoker
set search_path = ''
as $$
begin
  -- The user's device lock, then the push token locks (20261126001900).
  perform app_private.lock_device_registration(p_user_id, p_push_token);
  -- Then the user's and the sessions' rows, before any device row.
  perform app_private.lock_registration_sessions(p_installation_id);
end
$$;
comment on function app_private.lock_device_registration(uuid, text, uuid) is
  'Taken first by a session start of user p_user_id on installation p_installation_id storing push token p_push_token (null: keeps or clears it): lock_device_registration(p_user_id, p_push_token) (the user''s device lock, then the token locks in key order), then lock_registration_sessions(p_installation_id) (the user''s row, the caller''s session, the session the installation ran before), so no device row is locked while any of these is awaited: no deadlock with a sign-out or between users registering one token. Held until the transaction ends. EXECUTE for authenticated (the api function) only.';
revoke all on function app_private.lock_device_registration(uuid, text, uuid) from public, anon, authenticated, service_role;
grant execute on function app_private.lock_device_registration(uuid, text, uuid) to authenticated;

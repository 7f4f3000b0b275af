-- What: a session start takes every other user's push token off the
-- installation it starts on, whether or not it sends a token itself.
-- app_private.release_installation_push_tokens(installation_id) clears the
-- push token of each other user's device row on that installation; the
-- session start (registerDevice, POST /v1/auth/session) calls it once its own
-- device there is bound to its session. Its locks come first, in the
-- documented order: lock_device_registration(user, token, installation) now
-- takes, after the user's device lock, the installation's lock and then, in
-- one key order, the locks of the token it stores, of its user's tokens (now
-- also when it stores none) and of the tokens other users' devices hold on
-- that installation (app_private.lock_installation_push_tokens). The index
-- devices_installation_id_idx finds an installation's rows.
-- Why: a shared phone (a family tablet: people switch users rather than sign
-- out) runs one user's session at a time, but only a token the new user SENT
-- was detached (devices_20_release_push_token). User B signing in on user A's
-- phone with push_token null (notifications off) or left out (no token yet at
-- launch) left A's token on A's device there: every push meant for A reached
-- the phone B now used, and A's other phone listed it with has_push_token.
-- A's device stays active (her session there is hers to end); it only gets no
-- pushes until her app sends its token again at her next start there.
-- Lock order (docs/devices-and-sessions.md, "Lock order"): the installation's
-- lock is taken only by session starts, right after the user's device lock
-- and before any token lock, so starts on one installation run in turn and
-- the tokens read under it stay put (only a start on that installation puts
-- a token on its rows); the cleared rows' token locks are held before any
-- device row, as a detach holds its token's. A start locks its own tokens
-- even when it stores none: two users swapping phones at once with the same
-- sessions (each moving its session off the row the other then clears) meet
-- at those locks instead of holding one row each and waiting for the other.
-- Security definer, both: the other users' rows are hidden by RLS. They act
-- for auth.uid() only, return nothing, EXECUTE for authenticated only; the
-- release refuses (42501) unless the caller's device on that installation
-- runs the caller's session.
-- tests/integration/devices.test.ts ("push tokens: at most one active device
-- each"), device-session-races.test.ts; pgTAP 301-devices pins the privileges.
-- Rollback: supabase/rollbacks/20261128001300_installation_pushes_follow_its_session.down.sql

create index devices_installation_id_idx on app_private.devices (installation_id);
comment on index app_private.devices_installation_id_idx is
  'Finds every user''s device row on one installation: a session start there clears the other users'' push tokens (release_installation_push_tokens).';

create function app_private.lock_installation_push_tokens(p_push_token text, p_installation_id uuid)
returns void
language plpgsql
volatile
security definer
set search_path = ''
as $$
declare
  v_caller uuid := auth.uid();
  v_key bigint;
begin
  if v_caller is null then
    raise exception 'lock_installation_push_tokens needs a signed-in caller' using errcode = '42501';
  end if;
  -- Starts on one installation run in turn: no other writer puts a token on
  -- its rows, so the other users' tokens read below stay (or go to null).
  perform pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtextextended('tidesync.installation:' || p_installation_id::text, 0));
  -- One sorted pass over every token lock the start needs (two passes would
  -- not be one key order): the token it stores, those its user's devices hold
  -- (rows it may lock: the one it moves its session off, its own), and those
  -- release_installation_push_tokens will clear.
  for v_key in
    select distinct app_private.push_token_lock_key(t.push_token)
    from (select p_push_token as push_token where p_push_token is not null
          union all
          select d.push_token from app_private.devices d
           where d.user_id = v_caller and d.push_token is not null
          union all
          select d.push_token from app_private.devices d
           where d.installation_id = p_installation_id and d.user_id <> v_caller and d.push_token is not null) t
    order by 1
  loop
    perform pg_catalog.pg_advisory_xact_lock(v_key);
  end loop;
end
$$;
comment on function app_private.lock_installation_push_tokens(text, uuid) is
  'Taken by a session start (lock_device_registration(uuid, text, uuid)) after the user''s device lock and before any row: the lock of installation p_installation_id (starts there run in turn), then, in key order, the locks of p_push_token, of the caller''s tokens and of the tokens other users'' devices hold on that installation (which release_installation_push_tokens clears). Held until the transaction ends. Security definer (RLS hides other users'' devices); acts for auth.uid(), returns nothing; EXECUTE for authenticated only.';
revoke all on function app_private.lock_installation_push_tokens(text, uuid) from public, anon, authenticated, service_role;
grant execute on function app_private.lock_installation_push_tokens(text, uuid) to authenticated;

create function app_private.release_installation_push_tokens(p_installation_id uuid)
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
  -- Only the phone that runs the caller's session may take it for them.
  if v_caller is null or v_session is null or not exists (
    select from app_private.devices d
     where d.user_id = v_caller and d.installation_id = p_installation_id and d.session_id = v_session) then
    raise exception 'release_installation_push_tokens: the caller''s session does not run on this installation' using errcode = '42501';
  end if;
  -- The session start holds these tokens' locks (lock_installation_push_tokens).
  update app_private.devices d
     set push_token = null, push_provider = null
   where d.installation_id = p_installation_id
     and d.user_id <> v_caller
     and d.push_token is not null;
end
$$;
comment on function app_private.release_installation_push_tokens(uuid) is
  'POST /v1/auth/session: the installation p_installation_id runs the caller''s session now, so every other user''s device row there loses its push token (the row stays active: that session is its user''s to end). Refuses (42501) unless the caller''s device on that installation is bound to the caller''s session. Security definer (RLS hides other users'' devices); returns nothing; EXECUTE for authenticated only.';
revoke all on function app_private.release_installation_push_tokens(uuid) from public, anon, authenticated, service_role;
grant execute on function app_private.release_installation_push_tokens(uuid) to authenticated;

create or replace function app_private.lock_device_registration(p_user_id uuid, p_push_token text, p_installation_id uuid)
returns void
language plpgsql
volatile
security invoker
set search_path = ''
as $$
begin
  perform app_private.lock_user_devices(p_user_id);
  -- The installation's lock, then every token lock, in key order.
  perform app_private.lock_installation_push_tokens(p_push_token, p_installation_id);
  -- Then the user's and the sessions' rows, before any device row.
  perform app_private.lock_registration_sessions(p_installation_id);
end
$$;
comment on function app_private.lock_device_registration(uuid, text, uuid) is
  'Taken first by a session start of user p_user_id on installation p_installation_id storing push token p_push_token (null: keeps or clears it): the user''s device lock (lock_user_devices), then lock_installation_push_tokens (the installation''s lock; the locks of p_push_token, of the user''s tokens and of other users'' tokens on the installation, in key order), then lock_registration_sessions(p_installation_id) (the user''s row, the caller''s session, the session the installation ran before), so no device row is locked while any of these is awaited: no deadlock with a sign-out, between users registering one token, or between users starting on one installation. Held until the transaction ends. EXECUTE for authenticated (the api function) only.';

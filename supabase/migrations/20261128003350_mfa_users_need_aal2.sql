-- What: a user who turned MFA on (a verified factor in auth.mfa_factors) is
-- reached only by a session that completed it. The rule of
-- app_private.session_is_live(), which the api function, the Data API's and
-- Realtime's policies and functions (app_private.live_uid()), GET /v1/devices
-- and app_private.push_targets share, becomes app_private.session_standing():
--   'signed_out'     the session no longer counts (as before: its auth.sessions
--                    row is gone or ended by time, or the user cannot sign in);
--   'aal2_required'  it counts, but is aal1 (auth.sessions.aal) while its user
--                    has a verified factor: Supabase Auth's session after the
--                    password step and before the second factor's;
--   'live'           otherwise.
-- session_is_live() is standing = 'live'; the api function reads the standing
-- itself to answer 'aal2_required' with 403 FORBIDDEN ("complete multi-factor
-- sign-in (aal2)") rather than 401.
-- The session row's aal is the authority, not the token's aal claim: Supabase
-- Auth writes it (aal2 when a factor is verified in the session, aal1 again
-- when the factor that raised it is unenrolled) and its own aal2 checks read
-- it (session.IsAAL2() for enrolling and unenrolling factors). So an aal1
-- token the session held before its second factor works once the session is
-- aal2, and a token still saying aal2 stops when Auth downgraded the session.
-- The factor lookup is made for aal1 sessions only (aal2 ones need none), an
-- index probe on mfa_factors_user_id_idx, once per statement as before
-- (live_uid() in an initplan).
-- Why: with MFA on, the password alone opened everything: an aal1 session read
-- the user's lists through the Data API, exported the account
-- (GET /v1/users/me/export, factors and sessions included) and requested its
-- deletion, which signed the user's aal2 phone out.
-- Test: pgTAP 142-mfa-users-need-aal2; tests/integration/mfa-needs-aal2.test.ts.
-- Docs: docs/security-model.md, docs/devices-and-sessions.md, docs/errors.md.
-- Rollback: supabase/rollbacks/20261128003350_mfa_users_need_aal2.down.sql

create function app_private.session_standing(p_session_id uuid, p_user_id uuid)
returns text
language plpgsql
stable
security definer
set search_path = ''
as $$
declare
  v_aal text;
begin
  -- A user learns nothing of another user's sessions.
  if current_setting('role') = 'authenticated' and p_user_id is distinct from auth.uid() then
    return 'signed_out';
  end if;
  -- A session row always has its user (the foreign key cascades).
  select s.aal::text into v_aal
    from auth.sessions s
   where s.id = p_session_id
     and s.user_id = p_user_id
     and not app_private.session_has_ended(s.not_after, s.created_at, s.refreshed_at);
  if not found or app_private.cannot_sign_in(p_user_id) then
    return 'signed_out';
  end if;
  -- Supabase Auth leaves aal null or aal1 until a second factor is verified in the session.
  if coalesce(v_aal, 'aal1') = 'aal1'
     and exists (select 1 from auth.mfa_factors f where f.user_id = p_user_id and f.status = 'verified') then
    return 'aal2_required';
  end if;
  return 'live';
end
$$;
comment on function app_private.session_standing(uuid, uuid) is
  'The one rule for what a Supabase session may do as its user: ''signed_out'' when it no longer counts (its auth.sessions row is gone for p_user_id or has ended by time, app_private.session_has_ended; or the user cannot sign in, app_private.cannot_sign_in: banned or soft-deleted); ''aal2_required'' when it counts but is aal1 (auth.sessions.aal, which Supabase Auth raises to aal2 when a second factor is verified in the session; not the token''s aal claim) while the user has a verified factor (auth.mfa_factors); else ''live''. app_private.session_is_live() is standing = ''live''; the api function reads the standing to answer ''aal2_required'' with 403 FORBIDDEN. The factor lookup is made for aal1 sessions only. Security definer: authenticated cannot read auth.*; called as authenticated it answers only for the caller''s own sessions (''signed_out'' for anyone else''s). plpgsql, so its plan is cached per connection.';
revoke all on function app_private.session_standing(uuid, uuid) from public, anon, authenticated, service_role;
grant execute on function app_private.session_standing(uuid, uuid) to authenticated, service_role;

create or replace function app_private.session_is_live(p_session_id uuid, p_user_id uuid)
returns boolean
language plpgsql
stable
security invoker
set search_path = ''
as $$
begin
  return app_private.session_standing(p_session_id, p_user_id) = 'live';
end
$$;
comment on function app_private.session_is_live(uuid, uuid) is
  'Whether a Supabase session may act as its user: app_private.session_standing() = ''live'' (its auth.sessions row exists for p_user_id and has not ended by time, the user can sign in, and the session completed MFA (aal2) if the user has a verified factor). The api function''s session check, the Data API''s and Realtime''s policies and functions (through app_private.live_uid()), GET /v1/devices (active) and app_private.push_targets apply it. Called as authenticated it answers only for the caller''s own sessions (false for anyone else''s).';

comment on function app_private.live_uid() is
  'auth.uid() while the caller''s session counts (app_private.session_is_live of the token''s session_id claim: not signed out, not ended by time, the user neither banned nor soft-deleted, and aal2 if the user has a verified MFA factor), else null; null for a token without session_id. What the policies and functions reached with a user''s token (Data API, Realtime) take for the caller, in an initplan ((select app_private.live_uid())), so that a signed-out session''s unexpired token, or the password step of an MFA user''s sign-in, opens nothing. A transaction of the api function that checked its session first (setting tidesync.live_session to its id, as it sets request.jwt.claims) is not checked again: a request runs to its end as if before a sign-out that commits meanwhile. EXECUTE for authenticated only.';

comment on view app_private.push_targets is
  'Where to send a user''s pushes: the devices holding a push token whose session still counts (app_private.session_is_live: not expired, user neither banned nor deleted, aal2 if the user has a verified MFA factor). What push senders read (service_role), never app_private.devices.push_token directly. See docs/devices-and-sessions.md, "Sending pushes".';

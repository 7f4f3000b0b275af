-- What: app_private.revoke_session(session_id), which deletes one of the
-- caller's own Supabase Auth sessions.
-- Why: DELETE /v1/auth/session and DELETE /v1/devices/{id} must revoke a
-- Supabase session so that its refresh token stops working (auth.refresh_tokens
-- cascade from auth.sessions) and its access token is refused (the api
-- function checks auth.sessions on every request). The api function runs user
-- work as `authenticated`, which has no right on auth.sessions, and must not
-- get one: a grant would allow deleting any user's sessions. So this is the
-- one narrow door, a security definer function that
--   * deletes only a session whose user_id is auth.uid() (the verified caller;
--     another user's session id behaves exactly like an unknown one),
--   * takes no other input and returns only whether a row went away,
--   * is executable by `authenticated` only.
-- Everything else stays under RLS: deleting the session row makes the
-- devices.session_id foreign key (on delete set null) revoke the bound device
-- and clear its push token in the same transaction (20261122020200_devices.sql).
--
-- rollback:
--   drop function if exists app_private.revoke_session(uuid);

create function app_private.revoke_session(p_session_id uuid)
returns boolean
language plpgsql
volatile
security definer
set search_path = ''
as $$
declare
  caller uuid := auth.uid();
begin
  if caller is null then
    raise exception 'revoke_session needs an authenticated caller' using errcode = '42501';
  end if;
  delete from auth.sessions s
  where s.id = p_session_id
    and s.user_id = caller;
  return found;
end
$$;
comment on function app_private.revoke_session(uuid) is
  'Deletes the Supabase session p_session_id if it belongs to the caller (auth.uid()); its refresh tokens cascade and its bound device is revoked. Returns true when a session was deleted. Security definer (authenticated cannot write auth.sessions); EXECUTE for authenticated only.';
revoke all on function app_private.revoke_session(uuid) from public, anon, authenticated, service_role;
grant execute on function app_private.revoke_session(uuid) to authenticated;

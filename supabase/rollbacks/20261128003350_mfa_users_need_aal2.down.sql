-- Down step of 20261128003350_mfa_users_need_aal2.sql: session_is_live() reads
-- auth.sessions itself again, as 20261128001800 made it (an aal1 session of a
-- user with a verified factor counts again), live_uid() and push_targets get
-- their comments back, and session_standing() goes. Deploy the previous api
-- function first: this one calls session_standing() on every request.

create or replace function app_private.session_is_live(p_session_id uuid, p_user_id uuid)
returns boolean
language plpgsql
stable
security definer
set search_path = ''
as $$
begin
  -- A user learns nothing of another user's sessions.
  if current_setting('role') = 'authenticated' and p_user_id is distinct from auth.uid() then
    return false;
  end if;
  -- A session row always has its user (the foreign key cascades).
  return exists (select 1
                   from auth.sessions s
                  where s.id = p_session_id
                    and s.user_id = p_user_id
                    and not app_private.session_has_ended(s.not_after, s.created_at, s.refreshed_at))
     and not app_private.cannot_sign_in(p_user_id);
end
$$;
comment on function app_private.session_is_live(uuid, uuid) is
  'The one rule for "this Supabase session still counts": its auth.sessions row exists for p_user_id and has not ended by time (app_private.session_has_ended: not_after, Supabase Auth''s time-box and inactivity timeout), and the user can sign in (app_private.cannot_sign_in: neither banned nor soft-deleted). The api function''s session check, the Data API''s and Realtime''s policies and functions (through app_private.live_uid()), GET /v1/devices (active) and app_private.push_targets apply it. Security definer: authenticated cannot read auth.sessions; called as authenticated it answers only for the caller''s own sessions (false for anyone else''s). plpgsql, so its plan is cached per connection.';

comment on function app_private.live_uid() is
  'auth.uid() while the caller''s session counts (app_private.session_is_live of the token''s session_id claim: not signed out, not ended by time, the user neither banned nor soft-deleted), else null; null for a token without session_id. What the policies and functions reached with a user''s token (Data API, Realtime) take for the caller, in an initplan ((select app_private.live_uid())), so that a signed-out session''s unexpired token opens nothing. A transaction of the api function that checked its session first (setting tidesync.live_session to its id, as it sets request.jwt.claims) is not checked again: a request runs to its end as if before a sign-out that commits meanwhile. EXECUTE for authenticated only.';

comment on view app_private.push_targets is
  'Where to send a user''s pushes: the devices holding a push token whose session still counts (app_private.session_is_live: not expired, user neither banned nor deleted). What push senders read (service_role), never app_private.devices.push_token directly. See docs/devices-and-sessions.md, "Sending pushes".';

drop function app_private.session_standing(uuid, uuid);

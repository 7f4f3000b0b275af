-- What: app_private.session_is_live(session, user), the one rule for "this
-- Supabase session still counts": its auth.sessions row exists for that user
-- and has not passed not_after, and the user is neither banned (banned_until
-- in the future) nor deleted (deleted_at set), as Supabase Auth refuses them.
-- The api function's session check (liveSession(), functions/api/lib/db.ts)
-- calls it, GET /v1/devices reads it for each device (active: false and no
-- push token for a device whose session no longer counts), and
-- app_private.push_targets, the read for push senders, applies it.
-- Why: a device whose session had expired (not_after passed) or whose user was
-- banned stayed listed as signed in with its push token, and a push sender
-- reading app_private.devices kept pushing to it, although every request of
-- that session was refused: the device state reacts only to the session row's
-- deletion (the foreign key), and expiry and bans delete nothing.
-- tests/integration/devices.test.ts ("a session that no longer counts").
-- Rollback: supabase/rollbacks/20261126003200_live_session_rule.down.sql

create function app_private.session_is_live(p_session_id uuid, p_user_id uuid)
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
  return exists (
    select 1
      from auth.sessions s
      join auth.users u on u.id = s.user_id
     where s.id = p_session_id
       and s.user_id = p_user_id
       and (s.not_after is null or s.not_after > now())
       and (u.banned_until is null or u.banned_until <= now())
       and u.deleted_at is null
  );
end
$$;
comment on function app_private.session_is_live(uuid, uuid) is
  'The one rule for "this Supabase session still counts": its auth.sessions row exists for p_user_id and has not passed not_after, and the user is neither banned (banned_until in the future) nor deleted (deleted_at). The api function''s session check, GET /v1/devices (active) and app_private.push_targets apply it. Security definer: authenticated cannot read auth.sessions; called as authenticated it answers only for the caller''s own sessions (false for anyone else''s). plpgsql, so its plan is cached per connection.';
revoke all on function app_private.session_is_live(uuid, uuid) from public, anon, authenticated, service_role;
grant execute on function app_private.session_is_live(uuid, uuid) to authenticated, service_role;

create view app_private.push_targets
with (security_invoker = true)
as
select d.id as device_id, d.user_id, d.platform, d.push_provider, d.push_token, d.push_token_updated_at,
       d.locale, d.timezone
  from app_private.devices d
 where d.push_token is not null
   and app_private.session_is_live(d.session_id, d.user_id);
comment on view app_private.push_targets is
  'Where to send a user''s pushes: the devices holding a push token whose session still counts (app_private.session_is_live: not expired, user neither banned nor deleted). What push senders read (service_role), never app_private.devices.push_token directly. See docs/devices-and-sessions.md, "Sending pushes".';
revoke all on app_private.push_targets from public, anon, authenticated, service_role;
grant select on app_private.push_targets to service_role;

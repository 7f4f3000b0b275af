-- What: a session past Supabase Auth's time-box or inactivity timeout no
-- longer counts. app_private.session_has_ended(not_after, created_at,
-- refreshed_at) is the time part of the rule, written once and as Supabase
-- Auth's Session.CheckValidity (internal/models/sessions.go) computes it: past
-- not_after; past created_at + the time-box; past refreshed_at (created_at
-- while never refreshed) + the inactivity timeout. Neither setting writes
-- not_after. app_private.session_is_live() and the push-token sweep
-- app_private.release_expired_push_tokens() apply it. The two settings are
-- app_private.auth_sessions_timebox() and
-- app_private.auth_sessions_inactivity_timeout(): null (off) by default, as
-- Supabase Auth's; a project that sets [auth.sessions] timebox or
-- inactivity_timeout (GOTRUE_SESSIONS_TIMEBOX, _INACTIVITY_TIMEOUT) replaces
-- them in a migration of its own with the same durations.
-- Why: session_is_live() checked not_after only, so with either setting on, a
-- session Supabase Auth refuses to refresh stayed signed in: its access token
-- passed tidesync's session check until its exp, GET /v1/devices listed its
-- device active, and its push token stayed a push target and was never swept.
-- Test: pgTAP 305-sessions-past-auth-timeouts.
-- Rollback: supabase/rollbacks/20261127001860_session_rule_follows_auth_timeouts.down.sql

create function app_private.auth_sessions_timebox()
returns interval
language sql
stable
security invoker
set search_path = ''
as $$ select null::interval $$;
comment on function app_private.auth_sessions_timebox() is
  'Supabase Auth''s session time-box ([auth.sessions] timebox, GOTRUE_SESSIONS_TIMEBOX) as tidesync applies it; null = off, Supabase''s default. A project that sets it replaces this function in a migration of its own with the same duration (docs/devices-and-sessions.md).';

create function app_private.auth_sessions_inactivity_timeout()
returns interval
language sql
stable
security invoker
set search_path = ''
as $$ select null::interval $$;
comment on function app_private.auth_sessions_inactivity_timeout() is
  'Supabase Auth''s session inactivity timeout ([auth.sessions] inactivity_timeout, GOTRUE_SESSIONS_INACTIVITY_TIMEOUT) as tidesync applies it; null = off, Supabase''s default. A project that sets it replaces this function in a migration of its own with the same duration (docs/devices-and-sessions.md).';

-- refreshed_at is a timestamp without time zone that Supabase Auth writes in UTC.
create function app_private.session_has_ended(p_not_after timestamptz, p_created_at timestamptz, p_refreshed_at timestamp)
returns boolean
language sql
stable
security invoker
set search_path = ''
as $$
  select coalesce(p_not_after <= now(), false)
      or coalesce(p_created_at + nullif(app_private.auth_sessions_timebox(), interval '0') < now(), false)
      or coalesce(coalesce(p_refreshed_at at time zone 'UTC', p_created_at)
                  + nullif(app_private.auth_sessions_inactivity_timeout(), interval '0') < now(), false)
$$;
comment on function app_private.session_has_ended(timestamptz, timestamptz, timestamp) is
  'Whether an auth.sessions row (its not_after, created_at, refreshed_at) has ended by time, as Supabase Auth''s Session.CheckValidity: past not_after, past created_at + app_private.auth_sessions_timebox(), or past refreshed_at (created_at while never refreshed) + app_private.auth_sessions_inactivity_timeout(). The time part of app_private.session_is_live() and what the push-token sweep releases.';
revoke all on function app_private.auth_sessions_timebox() from public, anon, authenticated, service_role;
revoke all on function app_private.auth_sessions_inactivity_timeout() from public, anon, authenticated, service_role;
revoke all on function app_private.session_has_ended(timestamptz, timestamptz, timestamp) from public, anon, authenticated, service_role;

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
  return exists (
    select 1
      from auth.sessions s
      join auth.users u on u.id = s.user_id
     where s.id = p_session_id
       and s.user_id = p_user_id
       and not app_private.session_has_ended(s.not_after, s.created_at, s.refreshed_at)
       and (u.banned_until is null or u.banned_until <= now())
       and u.deleted_at is null
  );
end
$$;
comment on function app_private.session_is_live(uuid, uuid) is
  'The one rule for "this Supabase session still counts": its auth.sessions row exists for p_user_id and has not ended by time (app_private.session_has_ended: not_after, Supabase Auth''s time-box and inactivity timeout), and the user is neither banned (banned_until in the future) nor deleted (deleted_at). The api function''s session check, GET /v1/devices (active) and app_private.push_targets apply it. Security definer: authenticated cannot read auth.sessions; called as authenticated it answers only for the caller''s own sessions (false for anyone else''s). plpgsql, so its plan is cached per connection.';

create or replace function app_private.release_expired_push_tokens()
returns integer
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_released integer;
begin
  -- Only ending by time needs a sweep: a session passes not_after, the
  -- time-box or the inactivity timeout without any write (a ban, a soft
  -- delete and a deleted session release the token at once).
  -- Never waits for a writer (SKIP LOCKED): a start holding a row rebinds it
  -- to a live session or the next run takes it.
  update app_private.devices d
     set push_token = null, push_provider = null
   where d.id in (select x.id
                    from auth.sessions s
                    join app_private.devices x on x.session_id = s.id
                   where app_private.session_has_ended(s.not_after, s.created_at, s.refreshed_at)
                     and x.push_token is not null
                     for update of x skip locked);
  get diagnostics v_released = row_count;
  return v_released;
end;
$$;
comment on function app_private.release_expired_push_tokens() is
  'Sweep: deletes the push tokens of devices whose session ended by time (app_private.session_has_ended: not_after, Supabase Auth''s time-box or inactivity timeout; it no longer counts by app_private.session_is_live, and no write marks the moment); returns how many. Never waits for a writer (SKIP LOCKED). pg_cron runs it every 5 minutes where available, else service_role.';

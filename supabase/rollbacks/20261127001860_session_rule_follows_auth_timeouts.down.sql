-- Down step of 20261127001860_session_rule_follows_auth_timeouts.sql:
-- session_is_live() of 20261126003200 and release_expired_push_tokens() of
-- 20261127000120 again (not_after only), then the settings and the time rule go.
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
       and (s.not_after is null or s.not_after > now())
       and (u.banned_until is null or u.banned_until <= now())
       and u.deleted_at is null
  );
end
$$;
comment on function app_private.session_is_live(uuid, uuid) is
  'The one rule for "this Supabase session still counts": its auth.sessions row exists for p_user_id and has not passed not_after, and the user is neither banned (banned_until in the future) nor deleted (deleted_at). The api function''s session check, GET /v1/devices (active) and app_private.push_targets apply it. Security definer: authenticated cannot read auth.sessions; called as authenticated it answers only for the caller''s own sessions (false for anyone else''s). plpgsql, so its plan is cached per connection.';

create or replace function app_private.release_expired_push_tokens()
returns integer
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_released integer;
begin
  -- Only expiry needs a sweep: a session passes not_after without any write
  -- (a ban, a soft delete and a deleted session release the token at once).
  -- Never waits for a writer (SKIP LOCKED): a start holding a row rebinds it
  -- to a live session or the next run takes it.
  update app_private.devices d
     set push_token = null, push_provider = null
   where d.id in (select x.id
                    from auth.sessions s
                    join app_private.devices x on x.session_id = s.id
                   where s.not_after <= now()
                     and x.push_token is not null
                     for update of x skip locked);
  get diagnostics v_released = row_count;
  return v_released;
end;
$$;
comment on function app_private.release_expired_push_tokens() is
  'Sweep: deletes the push tokens of devices whose session passed its not_after (no longer counts by app_private.session_is_live, and no write marks the moment); returns how many. Never waits for a writer (SKIP LOCKED). pg_cron runs it every 5 minutes where available, else service_role.';

drop function app_private.session_has_ended(timestamptz, timestamptz, timestamp);
drop function app_private.auth_sessions_inactivity_timeout();
drop function app_private.auth_sessions_timebox();

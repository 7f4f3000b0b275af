-- What: a device's push token is deleted when its session stops counting,
-- not only when the session row goes: at once when its user is banned (a
-- trigger on auth.users), and for a session that passed its not_after by
-- app_private.release_expired_push_tokens() (pg_cron every 5 minutes where
-- available). A soft delete (auth.admin.deleteUser(id, true)) deletes the
-- user's sessions, which already cleared the tokens (devices_10_maintain_state).
-- Why: a device whose session expired or whose user was banned kept its push
-- token stored until Supabase Auth deleted the session row (days later, or
-- never while the row stays), although nothing sends to it (it is not in
-- app_private.push_targets) and the account export and GET /v1/devices said
-- has_push_token false. Nothing is kept that is not used. A ban that ends
-- makes the device active again without a token: the app registers it again
-- at its next session start (POST /v1/auth/session), as after a sign-in.
-- Tests: tests/integration/devices.test.ts ("a device whose session no longer
-- counts"), tests/integration/account-export.test.ts.
-- Rollback: supabase/rollbacks/20261127000120_push_tokens_go_with_their_session.down.sql

create function app_private.release_ended_push_tokens(p_user_id uuid)
returns integer
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_released integer;
begin
  -- In turn with the user's session starts, which lock two of the user's
  -- device rows one after the other. Every other writer of these rows (a
  -- sign-out, another user's start taking the token) clears the token
  -- itself, so a row it holds is skipped, never waited for.
  perform app_private.lock_user_devices(p_user_id);
  update app_private.devices d
     set push_token = null, push_provider = null
   where d.id in (select x.id from app_private.devices x
                   where x.user_id = p_user_id
                     and x.push_token is not null
                     and not app_private.session_is_live(x.session_id, x.user_id)
                     for update skip locked);
  get diagnostics v_released = row_count;
  return v_released;
end;
$$;
comment on function app_private.release_ended_push_tokens(uuid) is
  'Deletes the push tokens of user p_user_id''s devices whose session no longer counts (app_private.session_is_live: expired, user banned or soft-deleted); returns how many. In turn with the user''s session starts (lock_user_devices); a row another writer holds is skipped (every such writer clears the token). Run by the trigger on_auth_user_banned_release_push_tokens; not callable by any API role.';
revoke all on function app_private.release_ended_push_tokens(uuid) from public, anon, authenticated, service_role;

create function app_private.release_push_tokens_of_banned_user()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  perform app_private.release_ended_push_tokens(new.id);
  return null;
end;
$$;
comment on function app_private.release_push_tokens_of_banned_user() is
  'Trigger (after update of banned_until on auth.users, per row, when the user is now banned): the user''s devices lose their push tokens at once (app_private.release_ended_push_tokens). Not callable by any API role.';
revoke all on function app_private.release_push_tokens_of_banned_user() from public, anon, authenticated, service_role;

-- Supabase Auth bans with an update of banned_until (and updated_at): a
-- lock of the user's row that a session start's FOR KEY SHARE of it does not
-- wait for, so the trigger waiting for the start's lock_user_devices is no
-- deadlock.
create trigger on_auth_user_banned_release_push_tokens
  after update of banned_until on auth.users
  for each row
  when (new.banned_until > now())
  execute function app_private.release_push_tokens_of_banned_user();

create function app_private.release_expired_push_tokens()
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
revoke all on function app_private.release_expired_push_tokens() from public, anon, authenticated, service_role;
grant execute on function app_private.release_expired_push_tokens() to service_role;

-- Tokens already kept by sessions that no longer count.
select app_private.release_expired_push_tokens();
select app_private.release_ended_push_tokens(u.id)
  from auth.users u
 where u.banned_until > now() or u.deleted_at is not null;

do $$
begin
  if not exists (select 1 from pg_catalog.pg_extension where extname = 'pg_cron') then
    raise notice 'pg_cron is not enabled here: the push token sweep is not scheduled (run app_private.release_expired_push_tokens() yourself)';
    return;
  end if;
  execute $sql$
    select cron.schedule('tidesync-release-expired-push-tokens', '*/5 * * * *', 'select app_private.release_expired_push_tokens()')
  $sql$;
end
$$;

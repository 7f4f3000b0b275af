-- What: app_private.release_ended_push_tokens(user), run by the ban trigger
-- on_auth_user_banned_release_push_tokens, clears every token of the user's
-- devices whose session no longer counts, waiting for a device row another
-- transaction holds instead of skipping it (SKIP LOCKED is gone). A plain
-- UPDATE takes FOR NO KEY UPDATE, which a foreign key's FOR KEY SHARE does
-- not block, and after a wait it re-reads the row (READ COMMITTED), so a row
-- whose token the other writer cleared is left alone.
-- Why: the subquery's FOR UPDATE SKIP LOCKED skipped a device row that a
-- release_feedback insert from that device held FOR KEY SHARE (its foreign
-- key on device_id), and a row of a writer that rolled back: the ban left the
-- token stored, and once the ban ended the device was a push target again
-- with it. docs/devices-and-sessions.md promises a ban deletes the user's
-- tokens at once.
-- No deadlock: the ban holds the user's auth.users row (FOR NO KEY UPDATE,
-- which a session start's FOR KEY SHARE does not wait for) and then the
-- user's device lock (lock_user_devices). A writer holding one of the user's
-- device rows is a sign-out (holds its session, then the device; takes
-- neither), another user's start detaching a token (locks only its own
-- user's rows and locks), a feedback insert (FOR KEY SHARE: no conflict), or
-- a start or deletion request of this user, which took lock_user_devices
-- first, so the ban waited for it there, before any device row.
-- tests/integration/devices.test.ts ("a ban while feedback from the device is
-- being sent"); pgTAP 304-push-tokens-of-ended-sessions.
-- Rollback: supabase/rollbacks/20261127002310_ban_releases_push_tokens_it_waits_for.down.sql

create or replace function app_private.release_ended_push_tokens(p_user_id uuid)
returns integer
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_released integer;
begin
  -- In turn with the user's session starts and deletion request, which lock
  -- the user's device rows only after this lock.
  perform app_private.lock_user_devices(p_user_id);
  -- Waits for a row another writer holds (see the migration's header for why
  -- that is no deadlock), then re-reads it.
  update app_private.devices d
     set push_token = null, push_provider = null
   where d.user_id = p_user_id
     and d.push_token is not null
     and not app_private.session_is_live(d.session_id, d.user_id);
  get diagnostics v_released = row_count;
  return v_released;
end;
$$;
comment on function app_private.release_ended_push_tokens(uuid) is
  'Deletes the push tokens of user p_user_id''s devices whose session no longer counts (app_private.session_is_live: expired, user banned or soft-deleted); returns how many. In turn with the user''s session starts (lock_user_devices); waits for a device row another transaction holds (a foreign key''s FOR KEY SHARE does not block it). Run by the trigger on_auth_user_banned_release_push_tokens; not callable by any API role.';

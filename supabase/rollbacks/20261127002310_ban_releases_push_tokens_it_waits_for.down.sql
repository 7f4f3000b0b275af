-- Down step of 20261127002310_ban_releases_push_tokens_it_waits_for.sql:
-- release_ended_push_tokens as 20261127000120 made it (skips locked rows).
create or replace function app_private.release_ended_push_tokens(p_user_id uuid)
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

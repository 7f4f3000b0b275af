-- Down step of 20261128001300_installation_pushes_follow_its_session.sql:
-- lock_device_registration(uuid, text, uuid) as 20261126002600 made it (no
-- installation lock, no lock of other users' tokens), without the two
-- functions and the index (a start again leaves other users' tokens on its
-- installation).
create or replace function app_private.lock_device_registration(p_user_id uuid, p_push_token text, p_installation_id uuid)
returns void
language plpgsql
volatile
security invoker
set search_path = ''
as $$
begin
  -- The user's device lock, then the push token locks (20261126001900).
  perform app_private.lock_device_registration(p_user_id, p_push_token);
  -- Then the user's and the sessions' rows, before any device row.
  perform app_private.lock_registration_sessions(p_installation_id);
end
$$;
comment on function app_private.lock_device_registration(uuid, text, uuid) is
  'Taken first by a session start of user p_user_id on installation p_installation_id storing push token p_push_token (null: keeps or clears it): lock_device_registration(p_user_id, p_push_token) (the user''s device lock, then the token locks in key order), then lock_registration_sessions(p_installation_id) (the user''s row, the caller''s session, the session the installation ran before), so no device row is locked while any of these is awaited: no deadlock with a sign-out or between users registering one token. Held until the transaction ends. EXECUTE for authenticated (the api function) only.';

drop function app_private.release_installation_push_tokens(uuid);
drop function app_private.lock_installation_push_tokens(text, uuid);
drop index app_private.devices_installation_id_idx;

-- What: app_private.cancel_account_deletion() takes the caller's device lock
-- (app_private.lock_user_devices, 20261126001300) first, before it deletes the
-- request, as request_account_deletion and the session start do
-- (20261126001310, 20261126001900).
-- Why: a session start storing a push token and a cancel of the same user at
-- the same moment dropped the token. The start's trigger
-- devices_05_withhold_push_token_during_deletion found the request the cancel
-- had deleted but not committed yet, withheld the token and answered the
-- deletion as scheduled; the cancel then committed: the account was kept and
-- its device got no notifications. The other way round the start withheld the
-- token and then answered no deletion (its later read saw the cancel). In turn,
-- a start after the cancel waits for it and sees no request (the token is
-- stored), and a start before it withholds the token and answers the deletion
-- it withheld it for; the cancel then waits for the start. Lock order: the
-- user's lock, then the request row, as the request; the purge locks the
-- request row and never the user's lock, so they cannot wait on each other in
-- a cycle.
-- tests/integration/device-session-races.test.ts (both orders).
-- Rollback: supabase/rollbacks/20261126001910_deletion_cancel_in_turn.down.sql

create or replace function app_private.cancel_account_deletion()
returns boolean
language plpgsql
volatile
security definer
set search_path = ''
as $$
declare
  v_caller uuid := auth.uid();
  v_request uuid;
begin
  if v_caller is null then
    raise exception 'cancel_account_deletion needs a signed-in caller' using errcode = '42501';
  end if;
  -- In turn with the caller's device writes: a session start after this
  -- cancel sees no request and stores its push token; one before it has
  -- answered the deletion it withheld the token for.
  perform app_private.lock_user_devices(v_caller);
  delete from app_private.account_deletion_requests r where r.user_id = v_caller returning r.request_id into v_request;
  if v_request is null then
    return false;
  end if;
  insert into app_private.account_deletion_audit (request_id, event) values (v_request, 'cancelled');
  return true;
end
$$;
comment on function app_private.cancel_account_deletion() is
  'DELETE /v1/users/me/deletion: cancels the caller''s pending deletion (true) or does nothing (false), in turn with the caller''s device writes (lock_user_devices, taken first), so a push token registered meanwhile is neither dropped nor answered inconsistently. A purge already running for the user holds the request''s row lock, so a cancel waits for it and then finds nothing. EXECUTE for authenticated only.';

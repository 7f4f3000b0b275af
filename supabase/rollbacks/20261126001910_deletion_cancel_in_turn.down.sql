-- Down step of 20261126001910_deletion_cancel_in_turn.sql: the function as
-- 20261122050000_account_deletion.sql made it (no lock).
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
  delete from app_private.account_deletion_requests r where r.user_id = v_caller returning r.request_id into v_request;
  if v_request is null then
    return false;
  end if;
  insert into app_private.account_deletion_audit (request_id, event) values (v_request, 'cancelled');
  return true;
end
$$;
comment on function app_private.cancel_account_deletion() is
  'DELETE /v1/users/me/deletion: cancels the caller''s pending deletion (true) or does nothing (false). A purge already running for the user holds the request''s row lock, so a cancel waits for it and then finds nothing. EXECUTE for authenticated only.';

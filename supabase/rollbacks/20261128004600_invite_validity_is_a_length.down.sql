-- Down step of 20261128004600_invite_validity_is_a_length.sql:
-- create_list_invite compares p_valid_for as an interval and adds it to now()
-- as calendar months and days again, as 20261128003700 left it.

create or replace function public.create_list_invite(p_list_id uuid, p_role text default 'editor', p_valid_for interval default interval '7 days')
returns text
language plpgsql
volatile
security invoker
set search_path = ''
as $$
declare
  v_code text := replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', '');
begin
  if p_role is null or p_role not in ('owner', 'editor', 'viewer') then
    raise exception 'p_role must be owner, editor or viewer' using errcode = 'invalid_parameter_value';
  end if;
  -- At least a minute: the cap counts an invite only while it is pending, so
  -- shorter ones let an owner create rows at the rate of their requests.
  if p_valid_for is null or p_valid_for < interval '1 minute' or p_valid_for > interval '30 days' then
    raise exception 'p_valid_for must be between 1 minute and 30 days' using errcode = 'invalid_parameter_value';
  end if;
  -- One create of a list's invites at a time, so that two cannot pass the cap together.
  perform pg_advisory_xact_lock(hashtextextended('app_private.list_invites:' || p_list_id::text, 0));
  -- Only codes that redeem would honour count (a non-owner counts none, and the insert below refuses them).
  if app_private.pending_list_invites(p_list_id) >= app_private.max_pending_invites_per_list() then
    raise exception 'a list has at most % pending invites; they stop counting once used or expired, and those of a former owner, or of one who cannot sign in, do not count', app_private.max_pending_invites_per_list()
      using errcode = 'check_violation', constraint = 'max_pending_invites_per_list';
  end if;
  -- As the caller: the insert policy lets only an owner of the list through.
  insert into app_private.list_invites (list_id, role, code_sha256, expires_at)
  values (p_list_id, p_role, sha256(convert_to(v_code, 'UTF8')), now() + p_valid_for);
  return v_code;
exception
  when insufficient_privilege or foreign_key_violation then
    -- the same answer for a list that does not exist and one the caller does not own
    raise exception 'no such list, or you are not its owner' using errcode = 'insufficient_privilege';
end;
$$;
comment on function public.create_list_invite(uuid, text, interval) is
  'Data API: an owner creates a single-use invite code (64 hex characters) to the list with the given role (owner, editor, viewer; any other is 22023), valid for p_valid_for (default 7 days; at least 1 minute and at most 30 days, else 22023) and while the calling session counts (list_invites.created_session: signing it out withdraws the code); at most app_private.max_pending_invites_per_list() pending invites per list that would be honoured (app_private.pending_list_invites: their creator still an owner who can sign in, their session still counting; 23514). One that expires unused is deleted by the next run of app_private.purge_sync_retention.';

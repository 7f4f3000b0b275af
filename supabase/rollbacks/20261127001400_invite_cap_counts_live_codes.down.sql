-- Down step of 20261127001400_invite_cap_counts_live_codes.sql: create_list_invite()
-- as 20261127000520_list_invites_bounded_and_purged.sql made it (every pending invite counts).
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
  if p_valid_for is null or p_valid_for <= interval '0' or p_valid_for > interval '30 days' then
    raise exception 'p_valid_for must be between 1 second and 30 days' using errcode = 'invalid_parameter_value';
  end if;
  -- One create of a list's invites at a time, so that two cannot pass the cap together.
  perform pg_advisory_xact_lock(hashtextextended('app_private.list_invites:' || p_list_id::text, 0));
  -- As the caller: a non-owner sees none of the list's invites, and the insert below refuses them.
  if (select count(*) from app_private.list_invites i
       where i.list_id = p_list_id and i.used_at is null and i.expires_at > now()) >= app_private.max_pending_invites_per_list() then
    raise exception 'a list has at most % pending invites; withdraw some (delete their app_private.list_invites rows) or let them expire', app_private.max_pending_invites_per_list()
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
  'Data API: an owner creates a single-use invite code (64 hex characters) to the list with the given role (owner, editor, viewer; any other is 22023), valid for p_valid_for (default 7 days, at most 30); at most app_private.max_pending_invites_per_list() pending invites per list (23514).';

-- Down step of 20261127000510_invite_codes_as_written.sql: create_list_invite()
-- as 20261122010200_list_invites.sql made it and redeem_list_invite() as
-- 20261126001000_invites_need_their_owner.sql made it (the code hashed as
-- given, marked used by every accept, the role checked by the table only).
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
  if p_valid_for is null or p_valid_for <= interval '0' or p_valid_for > interval '30 days' then
    raise exception 'p_valid_for must be between 1 second and 30 days' using errcode = 'invalid_parameter_value';
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
  'Data API: an owner creates a single-use invite code (64 hex characters) to the list with the given role (owner, editor, viewer), valid for p_valid_for (default 7 days, at most 30).';
create or replace function app_private.redeem_list_invite(p_code text)
returns uuid
language plpgsql
volatile
security definer
set search_path = ''
as $$
declare
  v_user uuid := auth.uid();
  v_list uuid;
  v_role text;
begin
  if v_user is null then
    raise exception 'sign in to accept an invite' using errcode = 'insufficient_privilege';
  end if;
  update app_private.list_invites i
     set used_at = now(), used_by = v_user
   where i.code_sha256 = sha256(convert_to(coalesce(p_code, ''), 'UTF8'))
     and i.used_at is null
     and i.expires_at > now()
     -- the owner who created it still is one (a removed owner's codes do not let them back in)
     and exists (select 1 from public.list_members m
                  where m.list_id = i.list_id and m.user_id = i.created_by and m.role = 'owner')
  returning i.list_id, i.role into v_list, v_role;
  if v_list is null then
    -- wrong, used and expired codes, and those of a former owner, get the same answer
    raise exception 'this invite code is not valid (wrong, already used or expired)' using errcode = 'no_data_found';
  end if;
  -- A member already in the list keeps the better of the two roles.
  insert into public.list_members as m (list_id, user_id, role) values (v_list, v_user, v_role)
  on conflict (list_id, user_id) do update
    set role = case when 'owner' in (m.role, excluded.role) then 'owner'
                    when 'editor' in (m.role, excluded.role) then 'editor'
                    else 'viewer' end
  where m.role is distinct from excluded.role;
  return v_list;
end;
$$;
comment on function app_private.redeem_list_invite(text) is
  'Redeems an invite code for the caller (auth.uid()) while its creator is still an owner of the list: marks it used and adds the membership. SECURITY DEFINER (the caller can see neither the invite nor insert memberships); reached only through public.accept_list_invite.';

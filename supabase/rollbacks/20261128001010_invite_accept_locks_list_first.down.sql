-- Down step of 20261128001010_invite_accept_locks_list_first.sql:
-- redeem_list_invite() as 20261128001000 made it (the code locked alone).

create or replace function app_private.redeem_list_invite(p_code text)
returns uuid
language plpgsql
volatile
security definer
set search_path = ''
as $$
declare
  v_user uuid := auth.uid();
  v_invite uuid;
  v_list uuid;
  v_role text;
  v_current text;
  v_ranks constant text[] := array['viewer', 'editor', 'owner'];
begin
  if v_user is null then
    raise exception 'sign in to accept an invite' using errcode = 'insufficient_privilege';
  end if;
  -- Locked: of two accepts of one code, the second sees it used once the first commits.
  select i.id, i.list_id, i.role into v_invite, v_list, v_role
    from app_private.list_invites i
   -- codes are hex: as typed in capitals or pasted with whitespace around, the same code
   where i.code_sha256 = sha256(convert_to(lower(regexp_replace(coalesce(p_code, ''), '^\s+|\s+$', '', 'g')), 'UTF8'))
     and i.used_at is null
     and i.expires_at > now()
     -- the owner who created it still is one and can sign in (a removed,
     -- soft-deleted or banned owner's codes admit nobody)
     and app_private.invite_is_honoured(i.list_id, i.created_by)
     for update of i;
  if v_invite is null then
    -- wrong, used and expired codes, and those of a former owner or one who
    -- cannot sign in, get the same answer
    raise exception 'this invite code is not valid (wrong, already used or expired)' using errcode = 'no_data_found';
  end if;
  select m.role into v_current from public.list_members m where m.list_id = v_list and m.user_id = v_user;
  -- A member whose role is already as good changes nothing: the code stays for its invitee.
  if array_position(v_ranks, v_current) >= array_position(v_ranks, v_role) then
    return v_list;
  end if;
  update app_private.list_invites set used_at = now(), used_by = v_user where id = v_invite;
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
  'Redeems an invite code (trimmed, lower-cased) for the caller (auth.uid()) while its creator is an owner of the list who can sign in (app_private.invite_is_honoured): adds the membership or raises the caller''s role to the invite''s and marks the code used; a member whose role is already as good keeps it and leaves the code unused. SECURITY DEFINER (the caller can see neither the invite nor insert memberships); reached only through public.accept_list_invite.';

comment on function app_private.redeem_list_invite(text) is
  'Redeems an invite code (trimmed, lower-cased) for the caller (auth.uid()) while its creator is an owner of the list who can sign in (app_private.invite_is_honoured): adds the membership or raises the caller''s role to the invite''s and marks the code used; a member whose role is already as good keeps it and leaves the code unused. SECURITY DEFINER (the caller can see neither the invite nor insert memberships); reached only through public.accept_list_invite.';

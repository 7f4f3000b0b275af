-- Down step of 20261126001000_invites_need_their_owner.sql:
-- redeem_list_invite() as 20261122010200_list_invites.sql made it (a code
-- counts whoever created it).
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
  returning i.list_id, i.role into v_list, v_role;
  if v_list is null then
    -- wrong, used and expired codes get the same answer
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
  'Redeems an invite code for the caller (auth.uid()): marks it used and adds the membership. SECURITY DEFINER (the caller can see neither the invite nor insert memberships); reached only through public.accept_list_invite.';

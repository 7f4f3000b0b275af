-- What: an invite code counts only while the owner who created it is still
-- an owner of the list. app_private.redeem_list_invite() (behind
-- public.accept_list_invite) now also requires that; a code whose creator
-- was since demoted or removed fails like a wrong, used or expired one.
-- Why: invites outlived their creator's role. An owner removed from a list
-- (or demoted) could redeem a code they had created before, up to 30 days
-- old, and be an owner again, then remove the owner who removed them; the
-- remaining owners had no way through the API to see that such a code was
-- pending. Checked at redemption rather than by deleting codes on every
-- membership change: one rule, in the one place a code is used.
-- pgTAP 113 (a demoted owner's code, a removed owner's own code, and an
-- owner's code still working).
-- Rollback: supabase/rollbacks/20261126001000_invites_need_their_owner.down.sql

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

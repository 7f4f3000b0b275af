-- What: invite codes are read as people write them, an accept that changes
-- nothing leaves the code for its invitee, and a bad role is a stated error.
-- app_private.redeem_list_invite() (behind public.accept_list_invite) trims
-- surrounding whitespace and lower-cases the code before hashing it, and
-- marks the code used only when it adds the caller or raises their role (a
-- member whose role is already as good gets the list id and the code stays
-- pending). public.create_list_invite() refuses a p_role that is null or not
-- owner, editor or viewer with 22023 invalid_parameter_value naming them.
-- Why: codes are 64 hex characters; one typed in capitals or pasted with a
-- newline failed as "not valid"; an owner or member trying the code they
-- were about to pass on burned it for its invitee; p_role null or 'Owner'
-- surfaced raw 23502/23514 errors naming app_private.list_invites.
-- pgTAP 113-list-invites; docs/security-model.md, client/README.md.
--
-- Down step: supabase/rollbacks/20261127000510_invite_codes_as_written.down.sql.

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
  'Data API: an owner creates a single-use invite code (64 hex characters) to the list with the given role (owner, editor, viewer; any other is 22023), valid for p_valid_for (default 7 days, at most 30).';

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
     -- the owner who created it still is one (a removed owner's codes do not let them back in)
     and exists (select 1 from public.list_members m
                  where m.list_id = i.list_id and m.user_id = i.created_by and m.role = 'owner')
     for update of i;
  if v_invite is null then
    -- wrong, used and expired codes, and those of a former owner, get the same answer
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
  'Redeems an invite code (trimmed, lower-cased) for the caller (auth.uid()) while its creator is an owner of the list: adds the membership or raises the caller''s role to the invite''s and marks the code used; a member whose role is already as good keeps it and leaves the code unused. SECURITY DEFINER (the caller can see neither the invite nor insert memberships); reached only through public.accept_list_invite.';

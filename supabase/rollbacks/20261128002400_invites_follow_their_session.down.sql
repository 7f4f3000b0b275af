-- Down step of 20261128002400_invites_follow_their_session.sql: the two-argument
-- invite_is_honoured() as 20261128001000 made it, pending_list_invites() as
-- 20261128001000 and redeem_list_invite() as 20261128001800 made them, and
-- create_list_invite()'s comment as before; then the three-argument rule and
-- list_invites.created_session go (codes no longer follow their session).

create function app_private.invite_is_honoured(p_list_id uuid, p_created_by uuid)
returns boolean
language plpgsql
stable
set search_path = ''
as $$
begin
  return exists (select 1 from public.list_members m
                  where m.list_id = p_list_id and m.user_id = p_created_by and m.role = 'owner')
     and not app_private.cannot_sign_in(p_created_by);
end;
$$;
comment on function app_private.invite_is_honoured(uuid, uuid) is
  'The one rule for "an invite code of this creator works": p_created_by is an owner of p_list_id who can sign in (app_private.cannot_sign_in). redeem_list_invite honours only such codes and the cap of pending invites counts only those (pending_list_invites). Not callable by any API role.';
revoke all on function app_private.invite_is_honoured(uuid, uuid) from public, anon, authenticated, service_role;

create or replace function app_private.pending_list_invites(p_list_id uuid)
returns integer
language sql
stable
security definer
set search_path = ''
as $$
  select count(*)::integer
    from app_private.list_invites i
   where i.list_id = p_list_id
     -- only for an owner, who reads the list's invites anyway (their select policy)
     and p_list_id = any (app_private.my_list_ids('owner'))
     and i.used_at is null
     and i.expires_at > now()
     and app_private.invite_is_honoured(i.list_id, i.created_by)
$$;
comment on function app_private.pending_list_invites(uuid) is
  'How many of the list''s invites are pending and would be honoured (unused, unexpired, their creator an owner who can sign in: invite_is_honoured): what the cap of create_list_invite counts. 0 unless the caller owns the list. SECURITY DEFINER: whether a creator can sign in is read from auth.users.';

create or replace function app_private.redeem_list_invite(p_code text)
returns uuid
language plpgsql
volatile
security definer
set search_path = ''
as $$
declare
  -- A redeemer must be able to sign in as much as the code's creator.
  v_user uuid := app_private.live_uid();
  v_invite uuid;
  v_list uuid;
  v_role text;
  v_current text;
  v_ranks constant text[] := array['viewer', 'editor', 'owner'];
  -- codes are hex: as typed in capitals or pasted with whitespace around, the same code
  v_hash constant bytea := sha256(convert_to(lower(regexp_replace(coalesce(p_code, ''), '^\s+|\s+$', '', 'g')), 'UTF8'));
begin
  if v_user is null then
    raise exception 'sign in to accept an invite' using errcode = 'insufficient_privilege';
  end if;
  -- The list's row first (as the membership's foreign key would), then the
  -- code's: the order of a list's delete (its row, then the cascade to its
  -- invites). The other way round, an accept that locked the code while a
  -- delete held the list (the account purge locks a user's lists first) ended
  -- in a deadlock. A list deleted meanwhile leaves no code: a wrong one's answer.
  perform 1 from public.lists l
   where l.id = (select i.list_id from app_private.list_invites i where i.code_sha256 = v_hash)
     for key share;
  -- Locked: of two accepts of one code, the second sees it used once the first commits.
  select i.id, i.list_id, i.role into v_invite, v_list, v_role
    from app_private.list_invites i
   where i.code_sha256 = v_hash
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
  'Redeems an invite code (trimmed, lower-cased) for the caller while its creator is an owner of the list who can sign in (app_private.invite_is_honoured) and the caller''s own session counts (app_private.live_uid(): else 42501, as for anon): adds the membership or raises the caller''s role to the invite''s and marks the code used; a member whose role is already as good keeps it and leaves the code unused. Locks the list''s row (FOR KEY SHARE) before the code''s, as a delete of the list does: racing that delete, it waits and answers as for a wrong code. SECURITY DEFINER (the caller can see neither the invite nor insert memberships); reached only through public.accept_list_invite.';

comment on function public.create_list_invite(uuid, text, interval) is
  'Data API: an owner creates a single-use invite code (64 hex characters) to the list with the given role (owner, editor, viewer; any other is 22023), valid for p_valid_for (default 7 days, at most 30); at most app_private.max_pending_invites_per_list() pending invites per list whose creator is still an owner who can sign in (app_private.pending_list_invites; 23514).';

drop function app_private.invite_is_honoured(uuid, uuid, uuid);
alter table app_private.list_invites drop column created_session;

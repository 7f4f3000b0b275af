-- Down step of 20261128001000_invites_need_an_owner_who_can_sign_in.sql:
-- redeem_list_invite() and create_list_invite() as 20261127000510 and
-- 20261127001400 made them (a code works while its creator is an owner, who
-- may be soft-deleted or banned), pass_lists_to_successors() as
-- 20261128000100 and keep_a_list_owner() as 20261127002500 made them (only a
-- soft delete keeps an owner from counting), then the helpers go.

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
  -- Only codes that redeem would honour count: those of a creator who is still an owner.
  if (select count(*) from app_private.list_invites i
        join public.list_members m on m.list_id = i.list_id and m.user_id = i.created_by and m.role = 'owner'
       where i.list_id = p_list_id and i.used_at is null and i.expires_at > now()) >= app_private.max_pending_invites_per_list() then
    raise exception 'a list has at most % pending invites; they stop counting once used or expired, and a former owner''s invites do not count', app_private.max_pending_invites_per_list()
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
  'Data API: an owner creates a single-use invite code (64 hex characters) to the list with the given role (owner, editor, viewer; any other is 22023), valid for p_valid_for (default 7 days, at most 30); at most app_private.max_pending_invites_per_list() pending invites per list whose creator is still an owner (23514).';

create or replace function app_private.pass_lists_to_successors(p_lists uuid[], p_leaving uuid)
returns integer
language plpgsql
security definer
set search_path = ''
set plan_cache_mode = force_generic_plan
as $$
declare
  v_handed integer;
begin
  -- Nobody who could take a list over (a user who shares none): no UPDATE at
  -- all, whose statement triggers would run even for no row.
  if not exists (select 1 from public.list_members m
                  where m.list_id = any (p_lists) and m.user_id is distinct from p_leaving and m.role <> 'owner') then
    return 0;
  end if;
  -- Each of p_lists left with no owner who can sign in but p_leaving (null:
  -- nobody is leaving) and with another member who is not an owner passes to
  -- one of them: the longest-standing editor, else the longest-standing
  -- viewer; members with no deletion pending first, members Supabase Auth
  -- soft-deleted (who can never sign in to manage it) last, and those only
  -- when the list has no owner at all.
  with owner_less as (
    select l.id as list_id,
           exists (select 1 from public.list_members o
                    where o.list_id = l.id and o.role = 'owner' and o.user_id is distinct from p_leaving) as has_owner
      from public.lists l
     where l.id = any (p_lists)
       and not exists (select 1 from public.list_members o
                        where o.list_id = l.id and o.role = 'owner' and o.user_id is distinct from p_leaving
                          and not exists (select 1 from auth.users u where u.id = o.user_id and u.deleted_at is not null))
  ), successor as (
    select distinct on (m.list_id) m.list_id, m.user_id, s.has_owner,
           exists (select 1 from auth.users u where u.id = m.user_id and u.deleted_at is not null) as soft_deleted
      from public.list_members m
      join owner_less s on s.list_id = m.list_id
     where m.user_id is distinct from p_leaving and m.role <> 'owner'
     order by m.list_id,
              soft_deleted,
              exists (select 1 from app_private.account_deletion_requests r where r.user_id = m.user_id),
              m.role = 'editor' desc,
              m.created_at,
              m.user_id
  )
  update public.list_members m
     set role = 'owner'
    from successor s
   where m.list_id = s.list_id and m.user_id = s.user_id
     and not (s.soft_deleted and s.has_owner);
  get diagnostics v_handed = row_count;
  return v_handed;
end;
$$;
comment on function app_private.pass_lists_to_successors(uuid[], uuid) is
  'The succession order of a list''s ownership, in one place: each of p_lists left with no owner who can sign in (soft-deleted owners do not count) but p_leaving (null: none) and with another member gets one new owner (the longest-standing editor, else viewer; members with no pending deletion first, members soft-deleted by Supabase Auth last and only when the list has no owner at all). Returns how many lists changed hands. The caller locks the lists. Not callable by any API role.';

create or replace function app_private.keep_a_list_owner()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_list uuid;
  v_lost uuid[];
begin
  -- Owner changes of one list in turn (20261126000900).
  perform 1 from public.lists l
   where l.id in (select o.list_id from old_rows o where o.role = 'owner')
   order by l.id
     for no key update;
  if current_setting('transaction_isolation') <> 'read committed' then
    perform 1 from public.list_members m
     where m.list_id in (select o.list_id from old_rows o where o.role = 'owner') and m.role = 'owner'
       for share;
  end if;
  -- Account deletion (the cascade from auth.users) is no stepping down: a
  -- list left with no member at all goes with it (nobody could reach it).
  delete from public.lists l
   where l.id in (select o.list_id from old_rows o where not exists (select 1 from auth.users u where u.id = o.user_id))
     and not exists (select 1 from public.list_members m where m.list_id = l.id);
  -- A list that lost an owner with a deleted account and still has members
  -- passes on now that the statement's cascade is done: the hand-over before
  -- each row's delete still saw the other users the statement deletes (a bulk
  -- delete of the owner and its successor, or of two co-owners).
  v_lost := array(select distinct o.list_id from old_rows o
                   where o.role = 'owner' and not exists (select 1 from auth.users u where u.id = o.user_id));
  if cardinality(v_lost) > 0 then
    perform app_private.pass_lists_to_successors(v_lost, null);
  end if;
  select o.list_id into v_list
    from (select distinct o.list_id from old_rows o
           where o.role = 'owner' and exists (select 1 from auth.users u where u.id = o.user_id)) o
   where exists (select 1 from public.lists l where l.id = o.list_id)
     -- An owner Supabase Auth soft-deleted never signs in again: not an owner who keeps the list
     -- (the rule of pass_lists_to_successors, 20261127002410).
     and not exists (select 1 from public.list_members m join auth.users u on u.id = m.user_id
                      where m.list_id = o.list_id and m.role = 'owner' and u.deleted_at is null)
   limit 1;
  if v_list is not null then
    raise exception 'a list must keep an owner: make another member owner first, or delete the list'
      using errcode = 'check_violation', constraint = 'list_members_keep_an_owner';
  end if;
  return null;
end;
$$;
comment on function app_private.keep_a_list_owner() is
  'Trigger (after update/delete on list_members, per statement): refuses to leave a list that still exists without an owner who can sign in (one Supabase Auth soft-deleted does not count), except when the owner''s account is deleted: then a list left without members is deleted too, and one with members passes to a successor (app_private.pass_lists_to_successors). Owner changes of one list run in turn (the list''s row lock), so two owners stepping down at once cannot both succeed. SECURITY DEFINER: it must see every member, not only the caller''s view.';

drop function app_private.pending_list_invites(uuid);
drop function app_private.invite_is_honoured(uuid, uuid);
drop function app_private.cannot_sign_in(uuid);

-- Down step of 20261127002400_hand_over_after_bulk_user_delete.sql: hand_over_lists()
-- as 20261126003500 left it, keep_a_list_owner() as 20261126000900 did (no
-- hand-over after an account deletion's cascade), no pass_lists_to_successors().

CREATE OR REPLACE FUNCTION app_private.hand_over_lists(p_user_id uuid)
 RETURNS integer
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO ''
AS $function$
declare
  v_handed integer;
begin
  -- Lock the user's lists in one order: two purges whose users share a list
  -- serialize here, so the second sees the first one's hand-over (and never
  -- deletes the member it just made owner without handing over again).
  perform 1 from public.lists l
   where l.id in (select m.list_id from public.list_members m where m.user_id = p_user_id)
   order by l.id
     for update;

  -- Lists where the user is the only owner and someone else is a member pass
  -- to one other member: the longest-standing editor, else the longest-standing
  -- viewer; members not themselves leaving come first, and members Supabase
  -- Auth soft-deleted (who can never sign in to manage it) last. Lists with no
  -- other member go with the account (the keep_a_list_owner trigger).
  with sole_owned as (
    select m.list_id
      from public.list_members m
     where m.user_id = p_user_id and m.role = 'owner'
       and not exists (select 1 from public.list_members o
                        where o.list_id = m.list_id and o.role = 'owner' and o.user_id <> p_user_id)
  ), successor as (
    select distinct on (m.list_id) m.list_id, m.user_id
      from public.list_members m
      join sole_owned s on s.list_id = m.list_id
     where m.user_id <> p_user_id
     order by m.list_id,
              exists (select 1 from auth.users u where u.id = m.user_id and u.deleted_at is not null),
              exists (select 1 from app_private.account_deletion_requests r where r.user_id = m.user_id),
              m.role = 'editor' desc,
              m.created_at,
              m.user_id
  )
  update public.list_members m
     set role = 'owner'
    from successor s
   where m.list_id = s.list_id and m.user_id = s.user_id;
  get diagnostics v_handed = row_count;
  return v_handed;
end
$function$;
comment on function app_private.hand_over_lists(p_user_id uuid) is 'Part of the purge (and of the triggers on auth.users for a delete or a soft delete): every list p_user_id is the only owner of and that has other members gets a new owner (the longest-standing editor, else viewer; members with no pending deletion first, members soft-deleted by Supabase Auth last). Returns how many lists changed hands. Not callable by any API role.';

CREATE OR REPLACE FUNCTION app_private.keep_a_list_owner()
 RETURNS trigger
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO ''
AS $function$
declare
  v_list uuid;
begin
  -- Owner changes of one list in turn (see the migration's header).
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
  select o.list_id into v_list
    from (select distinct o.list_id from old_rows o
           where o.role = 'owner' and exists (select 1 from auth.users u where u.id = o.user_id)) o
   where exists (select 1 from public.lists l where l.id = o.list_id)
     and not exists (select 1 from public.list_members m where m.list_id = o.list_id and m.role = 'owner')
   limit 1;
  if v_list is not null then
    raise exception 'a list must keep an owner: make another member owner first, or delete the list'
      using errcode = 'check_violation', constraint = 'list_members_keep_an_owner';
  end if;
  return null;
end;
$function$;
comment on function app_private.keep_a_list_owner() is 'Trigger (after update/delete on list_members, per statement): refuses to leave a list that still exists without an owner, except when the owner''s account is deleted (then a list left without members is deleted too). Owner changes of one list run in turn (the list''s row lock), so two owners stepping down at once cannot both succeed. SECURITY DEFINER: it must see every member, not only the caller''s view.';

drop function app_private.pass_lists_to_successors(uuid[], uuid);

-- What: the choice of a list's new owner is one function,
-- app_private.pass_lists_to_successors(lists, leaving user), used by
-- hand_over_lists() (the purge, the triggers on auth.users) and now also by
-- keep_a_list_owner() after an account deletion's cascade: a surviving list
-- that lost an owner with a deleted account and has members but no owner
-- passes to its best member by the same succession order.
-- Why: the hand-over ran only per deleted row, before the delete, when the
-- other users the same statement deletes are still members. A bulk delete
-- (`delete from auth.users where id in (A, B)`, a dashboard multi-select) of
-- owner A and editor B made B owner, then removed B too: the viewer was left
-- with a list nobody owned; two co-owners deleted together each saw the other
-- as owner, so nobody was promoted. keep_a_list_owner() lets a deleted
-- account leave a list owner-less, and so accepted it.
-- pgTAP 501-account-deletion-hand-over (a bulk delete of the owner and the
-- successor; of two co-owners).
-- Rollback: supabase/rollbacks/20261127002400_hand_over_after_bulk_user_delete.down.sql

create function app_private.pass_lists_to_successors(p_lists uuid[], p_leaving uuid)
returns integer
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_handed integer;
begin
  -- Each of p_lists left with no owner but p_leaving (null: nobody is
  -- leaving, the list has no owner) and with another member passes to one
  -- member: the longest-standing editor, else the longest-standing viewer;
  -- members with no deletion pending first, members Supabase Auth
  -- soft-deleted (who can never sign in to manage it) last.
  with owner_less as (
    select l.id as list_id
      from public.lists l
     where l.id = any (p_lists)
       and not exists (select 1 from public.list_members o
                        where o.list_id = l.id and o.role = 'owner' and o.user_id is distinct from p_leaving)
  ), successor as (
    select distinct on (m.list_id) m.list_id, m.user_id
      from public.list_members m
      join owner_less s on s.list_id = m.list_id
     where m.user_id is distinct from p_leaving
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
end;
$$;
comment on function app_private.pass_lists_to_successors(uuid[], uuid) is
  'The succession order of a list''s ownership, in one place: each of p_lists left with no owner but p_leaving (null: none) and with another member gets one new owner (the longest-standing editor, else viewer; members with no pending deletion first, members soft-deleted by Supabase Auth last). Returns how many lists changed hands. The caller locks the lists. Not callable by any API role.';
revoke all on function app_private.pass_lists_to_successors(uuid[], uuid) from public, anon, authenticated, service_role;

create or replace function app_private.hand_over_lists(p_user_id uuid)
returns integer
language plpgsql
security definer
set search_path = ''
as $$
begin
  -- Lock the user's lists in one order: two purges whose users share a list
  -- serialize here, so the second sees the first one's hand-over (and never
  -- deletes the member it just made owner without handing over again).
  perform 1 from public.lists l
   where l.id in (select m.list_id from public.list_members m where m.user_id = p_user_id)
   order by l.id
     for update;
  -- Lists with no other member go with the account (keep_a_list_owner).
  return app_private.pass_lists_to_successors(
    array(select m.list_id from public.list_members m where m.user_id = p_user_id and m.role = 'owner'),
    p_user_id);
end;
$$;
comment on function app_private.hand_over_lists(p_user_id uuid) is 'Part of the purge (and of the triggers on auth.users for a delete or a soft delete): every list p_user_id is the only owner of and that has other members gets a new owner (app_private.pass_lists_to_successors). Returns how many lists changed hands. Not callable by any API role.';

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
     and not exists (select 1 from public.list_members m where m.list_id = o.list_id and m.role = 'owner')
   limit 1;
  if v_list is not null then
    raise exception 'a list must keep an owner: make another member owner first, or delete the list'
      using errcode = 'check_violation', constraint = 'list_members_keep_an_owner';
  end if;
  return null;
end;
$$;
comment on function app_private.keep_a_list_owner() is
  'Trigger (after update/delete on list_members, per statement): refuses to leave a list that still exists without an owner, except when the owner''s account is deleted: then a list left without members is deleted too, and one with members passes to a successor (app_private.pass_lists_to_successors). Owner changes of one list run in turn (the list''s row lock), so two owners stepping down at once cannot both succeed. SECURITY DEFINER: it must see every member, not only the caller''s view.';

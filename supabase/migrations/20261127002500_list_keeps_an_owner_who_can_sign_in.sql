-- What: stepping down or leaving is refused when it would leave a list with
-- no owner who can sign in: an owner Supabase Auth soft-deleted no longer
-- counts as the owner who keeps the list (keep_a_list_owner), as it already
-- does not for the hand-over (20261127002410).
-- Why: owner A and a soft-deleted co-owner S: A could step down to viewer or
-- leave, and the list was left with S alone, who can never sign in; nobody
-- could manage, share or delete it again (docs/security-model.md: a list
-- always keeps an owner). The same message and SQLSTATE as before (23514,
-- list_members_keep_an_owner): make another member owner first.
-- pgTAP 501-account-deletion-hand-over.
-- Rollback: supabase/rollbacks/20261127002500_list_keeps_an_owner_who_can_sign_in.down.sql

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

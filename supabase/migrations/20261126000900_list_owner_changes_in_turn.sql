-- What: app_private.keep_a_list_owner() takes the list's row lock (FOR NO KEY
-- UPDATE, in list order) before it checks that an owner is left, whenever a
-- statement removed or changed an owner's membership; under REPEATABLE READ
-- or SERIALIZABLE it also locks the list's remaining owner rows.
-- Why: two owners who step down (or demote each other) at the same moment
-- each still saw the other as owner, since neither had committed, and both
-- committed: a list without an owner, which nobody but the service role can
-- manage again. Now the second waits for the first; under READ COMMITTED
-- (PostgREST's, the function's) its check, a new statement, then sees what
-- the first committed and refuses with list_members_keep_an_owner. Under
-- REPEATABLE READ the check reads the transaction's older snapshot, so the
-- lock on an owner row that changed meanwhile fails the transaction with a
-- serialization error instead (40001, retryable). The list row lock does not
-- conflict with the foreign-key checks of a task being added to the list
-- (FOR KEY SHARE); it makes an edit of the list itself wait for the owner
-- change, and is the lock app_private.hand_over_lists() takes too.
-- tests/integration/list-owner-races.test.ts (two sessions, both orders).
-- Rollback: supabase/rollbacks/20261126000900_list_owner_changes_in_turn.down.sql

create or replace function app_private.keep_a_list_owner()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
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
$$;
comment on function app_private.keep_a_list_owner() is
  'Trigger (after update/delete on list_members, per statement): refuses to leave a list that still exists without an owner, except when the owner''s account is deleted (then a list left without members is deleted too). Owner changes of one list run in turn (the list''s row lock), so two owners stepping down at once cannot both succeed. SECURITY DEFINER: it must see every member, not only the caller''s view.';

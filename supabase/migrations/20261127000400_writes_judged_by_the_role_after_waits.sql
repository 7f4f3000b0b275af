-- What: a write as `authenticated` to a list, its tasks or its members is judged
-- once more, after the locks it waited for, against the caller's role as last
-- committed: app_private.require_list_role() (a new statement, so under READ
-- COMMITTED a snapshot taken after the wait) raises 42501 when the role no
-- longer allows the write. Triggers: lists (before update or delete, per row:
-- after the row lock), tasks (after insert and update, per statement: after the
-- foreign-key checks) and list_members (after update and delete, per statement,
-- named to fire after keep_a_list_owner's and track_sync_access's locks).
-- Why: a membership change locks the list row without changing it
-- (keep_a_list_owner: FOR NO KEY UPDATE; track_sync_access: FOR UPDATE), and
-- the policies are checked once, with the statement's snapshot (my_list_ids()
-- is STABLE). An owner demoted or removed while their Data API delete or
-- rename of the list waited for that lock still deleted or renamed it; an
-- owner removed while removing another member still removed them; an editor
-- removed while adding a task still added it, into a list they had lost
-- (docs/sync.md, "Access changes"). The push already locked first and wrote
-- in a later statement; it now gets the same answer from the database.
-- Only `authenticated` is checked: the service role and the owner bypass RLS
-- on purpose. Under REPEATABLE READ or SERIALIZABLE the check locks the
-- caller's membership rows (FOR SHARE), so a change of them committed since
-- the snapshot fails the transaction (40001), as keep_a_list_owner does.
-- tests/integration/role-loss-races.test.ts; pgTAP 129-writes-judged-after-waits.
-- Rollback: supabase/rollbacks/20261127000400_writes_judged_by_the_role_after_waits.down.sql

create function app_private.require_list_role(p_lists uuid[], p_min_role text)
returns void
language plpgsql
volatile
security definer
set search_path = ''
as $$
declare
  v_list uuid;
begin
  if current_setting('transaction_isolation') <> 'read committed' then
    perform 1 from public.list_members m
     where m.user_id = (select auth.uid()) and m.list_id = any (p_lists)
     order by m.list_id
       for share;
  end if;
  -- VOLATILE: this statement's snapshot (READ COMMITTED) includes what committed while the
  -- write waited; my_list_ids() is the policies' own rule.
  select l into v_list
    from unnest(p_lists) l, (select app_private.my_list_ids(p_min_role) as ids) mine
   where l <> all (mine.ids)
   limit 1;
  if v_list is not null then
    raise exception 'your role in list % no longer allows this write (it changed while the write ran)', v_list
      using errcode = 'insufficient_privilege';
  end if;
end;
$$;
comment on function app_private.require_list_role(uuid[], text) is
  'Raises 42501 unless the caller (auth.uid()) holds at least p_min_role in every list of p_lists as last committed (my_list_ids() read in a new statement, whose READ COMMITTED snapshot includes what committed while a write waited for a lock); under REPEATABLE READ or SERIALIZABLE it first locks the caller''s membership rows FOR SHARE (a change committed since the snapshot: 40001). For the recheck triggers of lists, tasks and list_members. SECURITY DEFINER: it locks membership rows the caller may not lock; it answers only about the caller.';
revoke all on function app_private.require_list_role(uuid[], text) from public, anon, authenticated, service_role;
grant execute on function app_private.require_list_role(uuid[], text) to authenticated;

-- lists: per row, BEFORE, so after the row lock (for which it may have waited) and
-- before a delete's cascade takes the caller's own membership with it.
create function app_private.recheck_list_write()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
  if current_user = 'authenticated' then
    -- The roles of the policies "Editors can update their lists" and "Owners can delete their lists".
    perform app_private.require_list_role(array[old.id], case tg_op when 'DELETE' then 'owner' else 'editor' end);
  end if;
  if tg_op = 'DELETE' then
    return old;
  end if;
  return new;
end;
$$;
comment on function app_private.recheck_list_write() is
  'Trigger (before update or delete on lists, per row, so after the row lock): as authenticated, the caller must still be an editor (update) or owner (delete) of the list as last committed (require_list_role), not only at the statement''s start.';
revoke all on function app_private.recheck_list_write() from public, anon, authenticated, service_role;

create trigger writer_role_rechecked
  before update or delete on public.lists
  for each row execute function app_private.recheck_list_write();
comment on trigger writer_role_rechecked on public.lists is
  'A write that waited for a membership change of the list is judged by the role after it (require_list_role).';

-- A table scoped by a list (tasks; an app's own table alike): per statement, after the
-- foreign-key checks (row triggers fire first), where a write into a list waits for a
-- removal (track_sync_access locks the list FOR UPDATE). Arguments: the least role, the
-- list column.
create function app_private.recheck_write_into_list()
returns trigger
language plpgsql
set search_path = ''
as $$
declare
  v_lists uuid[];
begin
  if current_user = 'authenticated' then
    execute format('select array_agg(distinct n.%I) from new_rows n', tg_argv[1]) into v_lists;
    perform app_private.require_list_role(v_lists, tg_argv[0]);
  end if;
  return null;
end;
$$;
comment on function app_private.recheck_write_into_list() is
  'Trigger (after insert or update of a table scoped by a list, per statement, with new_rows; arguments: the least role, the list column): as authenticated, the caller must still hold that role in every list the statement wrote rows into, as last committed (require_list_role).';
revoke all on function app_private.recheck_write_into_list() from public, anon, authenticated, service_role;

-- The role of the tasks policies ("Editors can add tasks…", "Editors can change the tasks…").
create trigger writer_role_rechecked_on_insert
  after insert on public.tasks referencing new table as new_rows
  for each statement execute function app_private.recheck_write_into_list('editor', 'list_id');
create trigger writer_role_rechecked_on_update
  after update on public.tasks referencing new table as new_rows
  for each statement execute function app_private.recheck_write_into_list('editor', 'list_id');
comment on trigger writer_role_rechecked_on_insert on public.tasks is
  'A task added while its writer lost the list (the foreign-key check waited for the removal) is refused (require_list_role).';
comment on trigger writer_role_rechecked_on_update on public.tasks is
  'A task moved into a list while its writer lost it is refused (require_list_role).';

-- list_members: per statement, named to fire after the other after-triggers (by name:
-- list_members_keep_an_owner_*, tidesync_track_access_losses), whose list locks are
-- what such a change waits for.
create function app_private.recheck_list_member_change()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
  if current_user = 'authenticated' then
    -- The policies: owners change and remove members, anyone leaves. A statement that
    -- changed the caller's own owner membership (stepping down, or their list's cascade)
    -- was made by an owner: old_rows holds that membership as the statement found it.
    perform app_private.require_list_role(array(
      select distinct o.list_id from old_rows o
       where not (tg_op = 'DELETE' and o.user_id = (select auth.uid()))
         and not exists (select 1 from old_rows s
                          where s.list_id = o.list_id and s.user_id = (select auth.uid()) and s.role = 'owner')), 'owner');
  end if;
  return null;
end;
$$;
comment on function app_private.recheck_list_member_change() is
  'Trigger (after update or delete on list_members, per statement, after the triggers that lock the list): as authenticated, a member changed or removed by someone else needs the caller to still own the list as last committed (require_list_role); leaving needs nothing.';
revoke all on function app_private.recheck_list_member_change() from public, anon, authenticated, service_role;

create trigger writer_role_rechecked_on_update
  after update on public.list_members referencing old table as old_rows
  for each statement execute function app_private.recheck_list_member_change();
create trigger writer_role_rechecked_on_delete
  after delete on public.list_members referencing old table as old_rows
  for each statement execute function app_private.recheck_list_member_change();
comment on trigger writer_role_rechecked_on_update on public.list_members is
  'A role change made while its maker lost ownership is refused (require_list_role). Its name sorts after the triggers whose locks it may wait for.';
comment on trigger writer_role_rechecked_on_delete on public.list_members is
  'A removal made while its maker lost ownership is refused (require_list_role). Its name sorts after the triggers whose locks it may wait for.';

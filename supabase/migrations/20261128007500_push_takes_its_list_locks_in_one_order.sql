-- What: app_private.lock_scopes_in_order(p_scopes, p_memberships, p_changed, p_written_into)
-- (SECURITY INVOKER): one pass over the batch's scope rows in key order, each locked once: a row of
-- p_changed (the scope rows the batch names and those of the memberships it names) FOR NO KEY
-- UPDATE as the caller, through the scope table's policies (returned: the push may change a named
-- one), falling back to FOR KEY SHARE by membership when the policies refuse it and the batch
-- writes into it; a row only of p_written_into FOR KEY SHARE by membership
-- (app_private.lock_scopes_written_into). The push sends it when its batch both changes scope rows
-- or memberships and writes rows into scopes (functions/api/sync/push-store.ts); either alone keeps
-- its one ordered statement. And app_private.lock_scopes_written_into (20261128007100) locks only
-- for a signed-in caller: app_private.live_uid(), not auth.uid().
-- Why: the push sent its list locks as two statements, each in id order but not together: the
-- lists of the memberships it names (FOR NO KEY UPDATE), then the lists it writes into (FOR KEY
-- SHARE). The purge's hand-over (app_private.hand_over_lists) locks the purged user's lists FOR
-- UPDATE in id order: a push removing a member of L2 and adding a task to L1 (L1 < L2) held L2 and
-- waited for L1, which the hand-over held while it waited for L2 (40P01, DBA review). A session
-- whose claims outlived its sign-out still locked the lists of its memberships (DBA review); the
-- membership registry knows no roles, so a viewer's lists are still locked (their writes are
-- refused at the write).
-- Tests: tests/integration/usage-lock-order.test.ts ("a push that changes a membership and writes
-- into another list meets an account purge"); pgTAP 171-push-scope-locks-in-one-order.
-- Rollback: supabase/rollbacks/20261128007500_push_takes_its_list_locks_in_one_order.down.sql.

create or replace function app_private.lock_scopes_written_into(p_scopes regclass, p_memberships regclass, p_ids uuid[])
returns void
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_scope_column name;
  v_user_column name;
  v_key name;
begin
  -- Only the rows of a scope table, through a membership table registered for it (its scope
  -- column's foreign key to that table's key): no other table's rows can be locked.
  select m.scope_column, m.user_column, k.attname into v_scope_column, v_user_column, v_key
    from app_private.sync_memberships m
    join pg_catalog.pg_attribute a on a.attrelid = m.relation and a.attname = m.scope_column
    join pg_catalog.pg_constraint c on c.conrelid = m.relation and c.contype = 'f' and c.conkey = array[a.attnum] and c.confrelid = p_scopes
    join pg_catalog.pg_attribute k on k.attrelid = c.confrelid and k.attnum = c.confkey[1]
   where m.relation = p_memberships;
  if v_key is null then
    raise exception 'lock_scopes_written_into: % is not a membership table of %', p_memberships, p_scopes
      using errcode = 'invalid_parameter_value';
  end if;
  -- A signed-out session's claims name no caller (live_uid() null): nothing is locked.
  execute format('select 1 from %s s where s.%I = any ($1) and exists (select 1 from %s m where m.%I = s.%I and m.%I = (select app_private.live_uid())) '
                 'order by s.%I for key share of s', p_scopes, v_key, p_memberships, v_scope_column, v_key, v_user_column, v_key)
    using p_ids;
end;
$$;
comment on function app_private.lock_scopes_written_into(regclass, regclass, uuid[]) is
  'The push''s first step for a batch that writes into scopes: locks FOR KEY SHARE (what its writes'' foreign-key checks take later), in key order, the scope rows among p_ids the signed-in caller (app_private.live_uid()) is a member of (p_memberships, registered for p_scopes), before any usage row: a member''s loss of the scope holds it FOR UPDATE while it waits for the owner''s usage row. A batch that also changes scope rows or memberships takes these locks in one pass with those (lock_scopes_in_order). SECURITY DEFINER: by membership, not through the scope table''s policies (0.5–1.7 ms a push).';
revoke all on function app_private.lock_scopes_written_into(regclass, regclass, uuid[]) from public, anon, authenticated, service_role;
grant execute on function app_private.lock_scopes_written_into(regclass, regclass, uuid[]) to authenticated;

create function app_private.lock_scopes_in_order(p_scopes regclass, p_memberships regclass, p_changed uuid[], p_written_into uuid[])
returns setof uuid
language plpgsql
security invoker
set search_path = ''
as $$
declare
  v_id uuid;
  v_changed boolean;
  v_written boolean;
  v_locked uuid;
begin
  -- Every scope row of the batch once, in key order: a row in both sets gets the stronger lock.
  for v_id, v_changed, v_written in
    select u.id, bool_or(u.changed), bool_or(not u.changed)
      from (select c.id, true from unnest(p_changed) c(id)
            union all
            select w.id, false from unnest(p_written_into) w(id)) u(id, changed)
     where u.id is not null
     group by u.id
     order by u.id
  loop
    v_locked := null;
    if v_changed then
      -- As the caller: the policies leave out a row they may not change (a viewer leaving).
      execute format('select s.id from %s s where s.id = $1 for no key update of s', p_scopes) into v_locked using v_id;
      if v_locked is not null then
        return next v_locked;
      end if;
    end if;
    if v_locked is null and v_written then
      perform app_private.lock_scopes_written_into(p_scopes, p_memberships, array[v_id]);
    end if;
  end loop;
end;
$$;
comment on function app_private.lock_scopes_in_order(regclass, regclass, uuid[], uuid[]) is
  'The push''s first step for a batch that both changes scope rows or memberships (p_changed: the scope rows it names and those of the memberships it names) and writes rows into scopes (p_written_into): every one of those rows once, in key order (the order of every other taker of several, such as the purge''s hand-over), p_changed FOR NO KEY UPDATE as the caller through p_scopes'' policies (returned), the others (and those the policies refuse) FOR KEY SHARE by membership (lock_scopes_written_into). Two ordered statements, one after the other, crossed the hand-over (40P01). SECURITY INVOKER.';
revoke all on function app_private.lock_scopes_in_order(regclass, regclass, uuid[], uuid[]) from public, anon, authenticated, service_role;
grant execute on function app_private.lock_scopes_in_order(regclass, regclass, uuid[], uuid[]) to authenticated;

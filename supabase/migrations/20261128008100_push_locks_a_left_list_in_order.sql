-- What: app_private.lock_scopes_in_order locks a changed scope row the scope table's policies
-- refuse the caller (a viewer leaving a list) FOR UPDATE by membership, in its place in the key
-- order, where it took nothing (or FOR KEY SHARE, when the batch also wrote into it). The lock by
-- membership is one function for both strengths, app_private.lock_scopes_by_membership;
-- lock_scopes_written_into is it FOR KEY SHARE.
-- Why: a viewer's leave is a membership change the list's policies refuse FOR NO KEY UPDATE, so
-- the push's one ordered pass (migration 20261128007500) skipped the list, and the leave's delete
-- policy (lock_list_for_member_change) locked it FOR UPDATE later, out of order: a push leaving LA
-- and adding a task to LB (LA < LB) held LB FOR KEY SHARE while it waited for LA, which a purge's
-- hand-over held FOR UPDATE while it waited for LB (40P01; DBA review). FOR UPDATE is what the
-- leave's policy takes anyway; a viewer's other changes of the list are refused at the write.
-- Tests: tests/integration/usage-lock-order.test.ts ("a viewer's push that leaves a list and writes
-- into another meets an account purge"); pgTAP 170-lock-scopes-written-into, 171-push-scope-locks-in-one-order.
-- Rollback: supabase/rollbacks/20261128008100_push_locks_a_left_list_in_order.down.sql.

create function app_private.lock_scopes_by_membership(p_scopes regclass, p_memberships regclass, p_ids uuid[], p_for_update boolean)
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
    raise exception 'lock_scopes_by_membership: % is not a membership table of %', p_memberships, p_scopes
      using errcode = 'invalid_parameter_value';
  end if;
  -- A signed-out session's claims name no caller (live_uid() null): nothing is locked.
  execute format('select 1 from %s s where s.%I = any ($1) and exists (select 1 from %s m where m.%I = s.%I and m.%I = (select app_private.live_uid())) '
                 'order by s.%I for %s of s', p_scopes, v_key, p_memberships, v_scope_column, v_key, v_user_column, v_key,
                 case when p_for_update then 'update' else 'key share' end)
    using p_ids;
end;
$$;
comment on function app_private.lock_scopes_by_membership(regclass, regclass, uuid[], boolean) is
  'Locks, in key order, the scope rows among p_ids the signed-in caller (app_private.live_uid()) is a member of (p_memberships, registered for p_scopes): FOR UPDATE when p_for_update (what a member''s leave takes), else FOR KEY SHARE (what writes into the scope take). The push''s locks by membership (lock_scopes_written_into, lock_scopes_in_order). SECURITY DEFINER: by membership, not through the scope table''s policies.';
revoke all on function app_private.lock_scopes_by_membership(regclass, regclass, uuid[], boolean) from public, anon, authenticated, service_role;
grant execute on function app_private.lock_scopes_by_membership(regclass, regclass, uuid[], boolean) to authenticated;

create or replace function app_private.lock_scopes_written_into(p_scopes regclass, p_memberships regclass, p_ids uuid[])
returns void
language plpgsql
security definer
set search_path = ''
as $$
begin
  perform app_private.lock_scopes_by_membership(p_scopes, p_memberships, p_ids, false);
end;
$$;

create or replace function app_private.lock_scopes_in_order(p_scopes regclass, p_memberships regclass, p_changed uuid[], p_written_into uuid[])
returns setof uuid
language plpgsql
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
      -- As the caller: the policies leave out a row they may not change (a viewer leaving)...
      execute format('select s.id from %s s where s.id = $1 for no key update of s', p_scopes) into v_locked using v_id;
      if v_locked is not null then
        return next v_locked;
      else
        -- ...which a leave's delete policy locks FOR UPDATE: here, in its place in the order.
        perform app_private.lock_scopes_by_membership(p_scopes, p_memberships, array[v_id], true);
      end if;
    elsif v_written then
      perform app_private.lock_scopes_by_membership(p_scopes, p_memberships, array[v_id], false);
    end if;
  end loop;
end;
$$;
comment on function app_private.lock_scopes_in_order(regclass, regclass, uuid[], uuid[]) is
  'The push''s first step for a batch that both changes scope rows or memberships (p_changed: the scope rows it names and those of the memberships it names) and writes rows into scopes (p_written_into): every one of those rows once, in key order (the order of every other taker of several, such as the purge''s hand-over), p_changed FOR NO KEY UPDATE as the caller through p_scopes'' policies (returned), or, where the policies refuse it (a viewer leaving), FOR UPDATE by membership (what the leave''s delete policy takes); the others FOR KEY SHARE by membership (lock_scopes_by_membership). Two ordered statements, one after the other, crossed the hand-over (40P01). SECURITY INVOKER.';

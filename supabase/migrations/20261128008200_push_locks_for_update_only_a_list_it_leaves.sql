-- What: app_private.lock_scopes_in_order takes a fifth argument, p_left: the scope ids of the
-- caller's own memberships the batch names (a leave, or a refused change of their own row). A
-- changed scope row the scope table's policies refuse the caller is locked FOR UPDATE by
-- membership only when it is in p_left; otherwise as before migration 20261128008100 (FOR KEY
-- SHARE by membership if the batch writes into it, else nothing). The four-argument function goes.
-- Why: 20261128008100 locked every refused changed row FOR UPDATE, so a viewer's op the policies
-- refuse (another member's role, another member's removal) took FOR UPDATE on the list: it waited
-- behind any member's write into the list (an insert's KEY SHARE) and answered 503 after the lock
-- timeout instead of FORBIDDEN, and every write into the list queued behind it meanwhile (hostile
-- review). Only a leave's delete policy locks the list FOR UPDATE; a refused op locks nothing.
-- Tests: tests/integration/membership-write-locks.test.ts ("a viewer's membership op that is refused
-- takes no lock of the list"), tests/integration/usage-lock-order.test.ts ("a viewer's push that
-- leaves a list …"); pgTAP 171-push-scope-locks-in-one-order.
-- Rollback: supabase/rollbacks/20261128008200_push_locks_for_update_only_a_list_it_leaves.down.sql.

create function app_private.lock_scopes_in_order(p_scopes regclass, p_memberships regclass, p_changed uuid[], p_written_into uuid[], p_left uuid[])
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
        continue;
      end if;
      -- ...which a leave's delete policy locks FOR UPDATE: here, in its place in the order. A
      -- refused op on another member's row locks nothing (it is refused at the write).
      if v_id = any (p_left) then
        perform app_private.lock_scopes_by_membership(p_scopes, p_memberships, array[v_id], true);
        continue;
      end if;
    end if;
    if v_written then
      perform app_private.lock_scopes_by_membership(p_scopes, p_memberships, array[v_id], false);
    end if;
  end loop;
end;
$$;
comment on function app_private.lock_scopes_in_order(regclass, regclass, uuid[], uuid[], uuid[]) is
  'The push''s first step for a batch that changes memberships, or changes scope rows and writes rows into scopes (p_changed: the scope rows it names and those of the memberships it names; p_written_into: the scope rows it writes into; p_left: the scopes of the caller''s own memberships it names): every one of those rows once, in key order (the order of every other taker of several, such as the purge''s hand-over), p_changed FOR NO KEY UPDATE as the caller through p_scopes'' policies (returned), or, where the policies refuse it and the caller leaves it (p_left), FOR UPDATE by membership (what the leave''s delete policy takes); the rows written into FOR KEY SHARE by membership (lock_scopes_by_membership). A refused change of another member''s row locks nothing. SECURITY INVOKER.';
revoke all on function app_private.lock_scopes_in_order(regclass, regclass, uuid[], uuid[], uuid[]) from public, anon, authenticated, service_role;
grant execute on function app_private.lock_scopes_in_order(regclass, regclass, uuid[], uuid[], uuid[]) to authenticated;

drop function app_private.lock_scopes_in_order(regclass, regclass, uuid[], uuid[]);

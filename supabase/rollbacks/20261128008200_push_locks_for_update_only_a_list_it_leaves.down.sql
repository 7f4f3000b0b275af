-- Down step of 20261128008200_push_locks_for_update_only_a_list_it_leaves.sql: the four-argument
-- lock_scopes_in_order as migration 20261128008100 wrote it, without the five-argument one.

create function app_private.lock_scopes_in_order(p_scopes regclass, p_memberships regclass, p_changed uuid[], p_written_into uuid[])
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
revoke all on function app_private.lock_scopes_in_order(regclass, regclass, uuid[], uuid[]) from public, anon, authenticated, service_role;
grant execute on function app_private.lock_scopes_in_order(regclass, regclass, uuid[], uuid[]) to authenticated;

drop function app_private.lock_scopes_in_order(regclass, regclass, uuid[], uuid[], uuid[]);

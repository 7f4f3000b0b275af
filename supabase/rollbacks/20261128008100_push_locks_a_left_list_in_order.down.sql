-- Down step of 20261128008100_push_locks_a_left_list_in_order.sql: lock_scopes_written_into and
-- lock_scopes_in_order as migration 20261128007500 wrote them, without lock_scopes_by_membership.

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

create or replace function app_private.lock_scopes_in_order(p_scopes regclass, p_memberships regclass, p_changed uuid[], p_written_into uuid[])
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

drop function app_private.lock_scopes_by_membership(regclass, regclass, uuid[], boolean);

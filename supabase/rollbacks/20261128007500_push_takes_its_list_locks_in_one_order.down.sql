-- Down step of 20261128007500_push_takes_its_list_locks_in_one_order.sql: lock_scopes_in_order goes
-- (a push of the code before it sends its two lock statements), and lock_scopes_written_into
-- checks auth.uid() again, as migration 20261128007100 made it.
drop function app_private.lock_scopes_in_order(regclass, regclass, uuid[], uuid[]);

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
  execute format('select 1 from %s s where s.%I = any ($1) and exists (select 1 from %s m where m.%I = s.%I and m.%I = (select auth.uid())) '
                 'order by s.%I for key share of s', p_scopes, v_key, p_memberships, v_scope_column, v_key, v_user_column, v_key)
    using p_ids;
end;
$$;
comment on function app_private.lock_scopes_written_into(regclass, regclass, uuid[]) is
  'The push''s first step: locks FOR KEY SHARE (what its writes'' foreign-key checks take later), in key order, the scope rows among p_ids the caller is a member of (p_memberships, registered for p_scopes), before any usage row: a member''s loss of the scope holds it FOR UPDATE while it waits for the owner''s usage row. SECURITY DEFINER: by membership, not through the scope table''s policies (0.5–1.7 ms a push).';

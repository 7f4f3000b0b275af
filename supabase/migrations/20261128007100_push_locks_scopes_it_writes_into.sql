-- What: app_private.lock_scopes_written_into(p_scopes, p_memberships, p_ids), SECURITY DEFINER:
-- locks FOR KEY SHARE, in key order, the rows of the scope table p_scopes among p_ids that the
-- caller is a member of (a row of p_memberships, a membership table registered for p_scopes,
-- names them). The push calls it in its first step, with the scopes its ops write rows into
-- (creates, moves), before it locks any other row (functions/api/sync/push-store.ts).
-- Why: a member's loss of a list (a leave, a removal) locks the list FOR UPDATE, then hands the
-- member's rows over to the owner, waiting for the owner's usage row; a push that created a row
-- (its user's usage row) and then added one to that list took the list (its foreign-key check's
-- FOR KEY SHARE) only then: the two crossed (40P01, the leave rolled back: a 500 through
-- PostgREST; DBA review). The push now takes that lock first. Taken as the caller, under the
-- scope table's policies (Postgres applies its SELECT and UPDATE policies to a row lock), it cost
-- a push 0.5–1.7 ms (my_list_ids twice); by membership, one index lookup.
-- Nothing else: a non-member's ids lock nothing (a foreign-key check of a write the policies let
-- through takes its lock at the write, as before), and nothing is returned.
-- Tests: pgTAP 170-lock-scopes-written-into; tests/integration/usage-lock-order.test.ts ("a push
-- that creates rows and adds one to that list").
-- Rollback: supabase/rollbacks/20261128007100_push_locks_scopes_it_writes_into.down.sql.

create function app_private.lock_scopes_written_into(p_scopes regclass, p_memberships regclass, p_ids uuid[])
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
revoke all on function app_private.lock_scopes_written_into(regclass, regclass, uuid[]) from public, anon, authenticated, service_role;
grant execute on function app_private.lock_scopes_written_into(regclass, regclass, uuid[]) to authenticated;

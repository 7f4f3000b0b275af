-- What: app_private.enable_sync_membership writes the access entries
-- (app_private.sync_access, granted) of the membership rows already in the
-- table it registers, as their inserts would have: through
-- app_private.grant_sync_access_to_members, which grants each row that has no
-- granted entry. The grant itself is one function,
-- app_private.grant_sync_access, which track_sync_access now calls for an
-- insert too. This migration runs grant_sync_access_to_members for the
-- membership tables registered before it (list_members: each row has its
-- entry already, so nothing is written there unless one is missing).
-- Why: only a membership inserted after the registration wrote an entry. An
-- app adopting tidesync (existing boards, members and items; then
-- enable_sync_membership and enable_sync) left every existing member without
-- one, and refuse_hidden_record_id and refuse_hidden_scope_history, which
-- read it, took the member's own scope for hidden: their supabase-js upsert
-- of an item they see, its delete and create again, and the upsert of their
-- board, answered 23505 on the primary key (DBA review). enable_sync records
-- a table's existing rows already (sync_records, sync_changes, usage).
-- Tests: pgTAP 169-existing-members-keep-their-rows.
-- Down step: supabase/rollbacks/20261128006700_existing_members_granted_access.down.sql

create function app_private.grant_sync_access(p_user_ids uuid[], p_scope_ids uuid[])
returns void
language sql
set search_path = ''
as $$
  insert into app_private.sync_access as a (user_id, scope_id, granted, seq, txid, changed_at)
  select g.user_id, g.scope_id, true, nextval('app_private.sync_seq'), pg_current_xact_id(), now()
    from unnest(p_user_ids, p_scope_ids) as g(user_id, scope_id)
  on conflict (user_id, scope_id) do update
    set granted = true, seq = excluded.seq, txid = excluded.txid, changed_at = excluded.changed_at;
$$;
comment on function app_private.grant_sync_access(uuid[], uuid[]) is
  'Writes that each user (p_user_ids[i]) was granted access to a scope (p_scope_ids[i]) now: their access entry in app_private.sync_access, granted, numbered after every change so far, so that their next pull delivers the scope. The one write of a grant: track_sync_access (a membership inserted) and grant_sync_access_to_members (memberships already there) call it.';
revoke all on function app_private.grant_sync_access(uuid[], uuid[]) from public, anon, authenticated, service_role;

create function app_private.grant_sync_access_to_members(p_table regclass)
returns void
language plpgsql
set search_path = ''
as $$
declare
  v_scope name;
  v_user name;
  v_users uuid[];
  v_scopes uuid[];
begin
  select m.scope_column, m.user_column into v_scope, v_user
    from app_private.sync_memberships m where m.relation = p_table;
  if v_scope is null then
    raise exception 'grant_sync_access_to_members: % is no membership table (enable_sync_membership)', p_table
      using errcode = 'invalid_parameter_value';
  end if;
  execute format($sql$
    select array_agg(t.user_id), array_agg(t.scope_id)
      from (select distinct (to_jsonb(m) ->> %L)::uuid as user_id, (to_jsonb(m) ->> %L)::uuid as scope_id from %s m) t
     where not exists (select 1 from app_private.sync_access a where a.user_id = t.user_id and a.scope_id = t.scope_id and a.granted)
  $sql$, v_user, v_scope, p_table) into v_users, v_scopes;
  perform app_private.grant_sync_access(v_users, v_scopes);
end;
$$;
comment on function app_private.grant_sync_access_to_members(regclass) is
  'For a registered membership table: grants access (grant_sync_access) to the user of each of its rows that has no granted access entry for the row''s scope, as the row''s insert would have. enable_sync_membership runs it on the rows already there (an app adopting tidesync); without it their users were refused their own rows (23505) by refuse_hidden_record_id and refuse_hidden_scope_history.';
revoke all on function app_private.grant_sync_access_to_members(regclass) from public, anon, authenticated, service_role;

create or replace function app_private.track_sync_access()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_scope text;
  v_user text;
  v_granted boolean := tg_op = 'INSERT';
  v_scope_table regclass;
  v_scope_key name;
  v_users uuid[];
  v_scopes uuid[];
begin
  select m.scope_column, m.user_column into v_scope, v_user
    from app_private.sync_memberships m where m.relation = tg_relid;
  if v_scope is null then
    return null;
  end if;
  -- Transition tables exist only for their own event, hence two statements.
  if v_granted then
    select array_agg((to_jsonb(n) ->> v_user)::uuid), array_agg((to_jsonb(n) ->> v_scope)::uuid)
      into v_users, v_scopes
      from new_rows n;
    perform app_private.grant_sync_access(v_users, v_scopes);
  else
    -- Rows entering a lost scope in a transaction still running (a push or an insert whose
    -- policy check passed before this loss committed) must get sequence numbers before the
    -- loss's, or the pull would never list them to the member as removed: the scope row is
    -- locked FOR UPDATE (found through the membership's foreign key), which such a write's
    -- own foreign-key check (FOR KEY SHARE) conflicts with. So the loss waits for writes
    -- already checked, and later ones wait for the loss.
    select c.confrelid::regclass, k.attname into v_scope_table, v_scope_key
      from pg_catalog.pg_constraint c
      join pg_catalog.pg_attribute a on a.attrelid = c.conrelid and a.attnum = c.conkey[1]
      join pg_catalog.pg_attribute k on k.attrelid = c.confrelid and k.attnum = c.confkey[1]
     where c.conrelid = tg_relid and c.contype = 'f' and cardinality(c.conkey) = 1 and a.attname = v_scope;
    if v_scope_table is not null then
      execute format('select 1 from %s s where s.%I = any ($1) order by s.%I for update', v_scope_table, v_scope_key, v_scope_key)
        using (select array_agg(distinct (to_jsonb(o) ->> v_scope)::uuid) from old_rows o);
    end if;
    insert into app_private.sync_access as a (user_id, scope_id, granted, seq, txid, changed_at)
    select c.user_id, c.scope_id, false, nextval('app_private.sync_seq'), pg_current_xact_id(), now()
      from (select (to_jsonb(o) ->> v_user)::uuid as user_id, (to_jsonb(o) ->> v_scope)::uuid as scope_id from old_rows o) c
     -- a user being deleted (the cascade from auth.users) needs no access history
     where exists (select 1 from auth.users u where u.id = c.user_id)
    on conflict (user_id, scope_id) do update
      set granted = false, seq = excluded.seq, txid = excluded.txid, changed_at = excluded.changed_at;
  end if;
  return null;
end;
$$;
comment on function app_private.track_sync_access() is
  'Trigger (after insert/delete, per statement) of a membership table: logs that a user gained (insert) or lost (delete) access to a scope, so their next pull delivers or removes the scope''s rows (a grant written by grant_sync_access, as enable_sync_membership writes those of the memberships already there); a loss first locks the scope rows (FOR UPDATE), so that rows entering the scope in transactions still running are numbered before it. SECURITY DEFINER: an owner removing a member writes the member''s access entry.';

create or replace function app_private.enable_sync_membership(p_table regclass, p_scope_column name, p_user_column name)
returns void
language plpgsql
security invoker
set search_path = ''
as $$
begin
  -- Its rows count in nobody's usage; enable_sync, run first, would have counted them.
  if exists (select 1 from app_private.sync_tables t where t.relation = p_table) then
    raise exception 'enable_sync_membership: % is synced already; register it with enable_sync_membership first, then enable_sync', p_table
      using errcode = 'invalid_parameter_value';
  end if;
  insert into app_private.sync_memberships (relation, scope_column, user_column) values (p_table, p_scope_column, p_user_column);
  execute format('create trigger tidesync_track_access_grants after insert on %s referencing new table as new_rows '
                 'for each statement execute function app_private.track_sync_access()', p_table);
  execute format('create trigger tidesync_track_access_losses after delete on %s referencing old table as old_rows '
                 'for each statement execute function app_private.track_sync_access()', p_table);
  -- TRUNCATE fires neither: refused (use DELETE).
  -- (or replace: a membership table may be synced too)
  execute format('create or replace trigger tidesync_refuse_truncate before truncate on %s '
                 'for each statement execute function app_private.refuse_sync_truncate()', p_table);
  -- The memberships already there (an app adopting tidesync) grant access as their inserts would
  -- have: without it their users' scopes were hidden to them (refuse_hidden_record_id and
  -- refuse_hidden_scope_history answered their own rows' ids as taken).
  perform app_private.grant_sync_access_to_members(p_table);
end;
$$;
comment on function app_private.enable_sync_membership(regclass, name, name) is
  'Registers a membership table: inserting (scope, user) grants the user access to the scope, deleting it takes it away; both are logged for pulls. The rows already there grant access as their inserts would have (grant_sync_access_to_members). A role change (update) is not an access change. TRUNCATE, which no trigger logs, is refused. To sync the table as a collection too, run enable_sync after it.';
revoke all on function app_private.enable_sync_membership(regclass, name, name) from public, anon, authenticated, service_role;

-- The membership tables registered before this migration.
select app_private.grant_sync_access_to_members(m.relation) from app_private.sync_memberships m;

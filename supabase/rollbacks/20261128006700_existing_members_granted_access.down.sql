-- Down step of 20261128006700_existing_members_granted_access.sql:
-- track_sync_access as 20261126001500_access_loss_after_writes_in_flight.sql
-- made it and enable_sync_membership as
-- 20261128000300_list_members_synced.sql made it; the two grant functions go.
-- The access entries the migration wrote stay (each names a membership that
-- exists).

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
begin
  select m.scope_column, m.user_column into v_scope, v_user
    from app_private.sync_memberships m where m.relation = tg_relid;
  if v_scope is null then
    return null;
  end if;
  -- Transition tables exist only for their own event, hence two statements.
  if v_granted then
    insert into app_private.sync_access as a (user_id, scope_id, granted, seq, txid, changed_at)
    select (to_jsonb(n) ->> v_user)::uuid, (to_jsonb(n) ->> v_scope)::uuid, true,
           nextval('app_private.sync_seq'), pg_current_xact_id(), now()
      from new_rows n
    on conflict (user_id, scope_id) do update
      set granted = true, seq = excluded.seq, txid = excluded.txid, changed_at = excluded.changed_at;
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
  'Trigger (after insert/delete, per statement) of a membership table: logs that a user gained (insert) or lost (delete) access to a scope, so their next pull delivers or removes the scope''s rows; a loss first locks the scope rows (FOR UPDATE), so that rows entering the scope in transactions still running are numbered before it. SECURITY DEFINER: an owner removing a member writes the member''s access entry.';

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
end;
$$;
comment on function app_private.enable_sync_membership(regclass, name, name) is
  'Registers a membership table: inserting (scope, user) grants the user access to the scope, deleting it takes it away; both are logged for pulls. A role change (update) is not an access change. TRUNCATE, which no trigger logs, is refused. To sync the table as a collection too, run enable_sync after it.';
revoke all on function app_private.enable_sync_membership(regclass, name, name) from public, anon, authenticated, service_role;

drop function app_private.grant_sync_access_to_members(regclass);
drop function app_private.grant_sync_access(uuid[], uuid[]);

-- What: app_private.track_sync_access(), on a loss of access (a membership
-- deleted), first locks the scope rows FOR UPDATE (the scope table found
-- through the membership table's foreign key, e.g. list_members.list_id →
-- lists), then numbers the loss.
-- Why: a member's write into a list (a task created or moved there), whose
-- policy check passed just before the member's removal committed, got a
-- sequence number after the removal's and committed first: the pull lists a
-- lost list's rows as removed only up to the removal's number, so that row
-- stayed on the member's device, in a list they had lost, until a full
-- sync. Such a write's foreign-key check takes FOR KEY SHARE on the list
-- row, which FOR UPDATE conflicts with: the removal now waits for writes
-- already checked (numbered before it), and later writes wait for the
-- removal (the push then sees the row it wrote hidden and plans again:
-- NOT_FOUND). A membership table without such a foreign key keeps the old
-- behaviour (docs/sync.md).
-- tests/integration/membership-loss-races.test.ts.
-- Rollback: supabase/rollbacks/20261126001500_access_loss_after_writes_in_flight.down.sql

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

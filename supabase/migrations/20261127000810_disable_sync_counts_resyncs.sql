-- What: app_private.disable_sync(table) counts itself in a new column,
-- app_private.sync_horizon.resyncs, instead of raising purged_txid to its own txid
-- (20261127000800). A pull cursor carries the count it was issued under; one with a lower
-- count gets 410 RESYNC_REQUIRED.
-- Why: a pull whose snapshot already sees the disable_sync may have an xmin at or below its
-- txid while an older transaction (of any database of the cluster) still runs: under the txid
-- horizon even a new full sync was refused, again and again until that transaction ended.
-- Tested by tests/integration/schema-changes.test.ts ("disable_sync then enable_sync").
--
-- Down step: supabase/rollbacks/20261127000810_disable_sync_counts_resyncs.down.sql
-- (disable_sync as 20261127000800 left it, the column dropped).

alter table app_private.sync_horizon add column resyncs bigint not null default 0;
comment on column app_private.sync_horizon.resyncs is
  'How many times disable_sync has run: a pull cursor issued under a lower count may hold rows no entry removes any more (410 RESYNC_REQUIRED).';

create or replace function app_private.disable_sync(p_table regclass)
returns void
language plpgsql
security invoker
set search_path = ''
as $$
declare
  v_collection text := (select t.collection from app_private.sync_tables t where t.relation = p_table);
  v_index regclass;
begin
  execute format('drop trigger if exists tidesync_track_inserts on %s', p_table);
  execute format('drop trigger if exists tidesync_track_updates on %s', p_table);
  execute format('drop trigger if exists tidesync_track_deletes on %s', p_table);
  execute format('drop trigger if exists tidesync_track_access_grants on %s', p_table);
  execute format('drop trigger if exists tidesync_track_access_losses on %s', p_table);
  -- The table's live rows leave their creators' usage (the triggers are gone:
  -- no write of the table changes the counts from here on).
  update app_private.sync_usage u
     set live_records = greatest(0, u.live_records - r.n)
    from (select s.created_by, count(*) as n
            from app_private.sync_records s
           where s.collection = v_collection and not s.deleted and s.created_by is not null
           group by s.created_by) r
   where u.user_id = r.created_by;
  -- The scope column's index, if enable_sync made it (its comment says so).
  for v_index in
    select i.indexrelid::regclass from pg_catalog.pg_index i
     where i.indrelid = p_table
       and pg_catalog.obj_description(i.indexrelid, 'pg_class') like 'Created by app_private.enable_sync%'
  loop
    execute format('drop index %s', v_index);
  end loop;
  delete from app_private.sync_memberships where relation = p_table;
  delete from app_private.sync_changes where collection = v_collection;
  delete from app_private.sync_records where collection = v_collection;
  delete from app_private.sync_tables where relation = p_table;
  -- A device may hold the table's rows, and its cursor cannot see what happens to them while sync is
  -- off (no change entries) nor after enable_sync again (which lists present rows, never removals):
  -- every cursor issued before this commits gets 410 RESYNC_REQUIRED (the pull compares the count
  -- its cursor carries). A count, not the purge's txid horizon: a pull whose snapshot sees this
  -- transaction may still have an xmin below its txid (an older transaction still running), and
  -- would be refused again and again.
  if v_collection is not null then
    update app_private.sync_horizon set resyncs = resyncs + 1;
  end if;
end;
$$;
comment on function app_private.disable_sync(regclass) is
  'Undoes enable_sync / enable_sync_membership for a table (down migrations): drops its triggers and its bookkeeping, takes its live rows out of their creators'' usage (sync_usage), drops the scope column''s index if enable_sync created it and counts itself in sync_horizon.resyncs, so that every pull cursor issued before it gets 410 RESYNC_REQUIRED.';
revoke all on function app_private.disable_sync(regclass) from public, anon, authenticated, service_role;

-- The live-records usage rows a write changes are locked in user_id order
-- (migration 20261128002600_usage_rows_locked_in_user_order): sync_apply announces
-- (tidesync.usage_rows) what the batch may change of usage (the caller's, the keys of
-- the rows it deletes or moves), and the first trigger that changes a usage locks
-- those rows' creators' usage with its own and forgets the announcement. The order itself needs two sessions: tests/integration/usage-lock-order.test.ts.
begin;
select plan(7);

select from tests.create_supabase_user('order_alice');
select from tests.create_supabase_user('order_carol');

create temporary table ids as select
  tests.get_supabase_uid('order_carol') as carol,
  'c9000000-0000-4000-8000-00000000000a'::uuid as first_list, 'c9000000-0000-4000-8000-00000000000b'::uuid as second_list,
  'c9000000-0000-4000-8000-0000000000c1'::uuid as carols_task;
grant select on ids to authenticated;

create function pg_temp.usage(p uuid) returns integer language sql as $$
  select live_records from app_private.sync_usage where user_id = p
$$;
-- A row locked or changed since it was written has an xmax (nothing else runs here).
create function pg_temp.usage_locked(p uuid) returns boolean language sql as $$
  select xmax::text <> '0' from app_private.sync_usage where user_id = p
$$;

-- ------------------------------------------------------------ privileges
select is(tests.function_callers('app_private.lock_sync_usage(uuid[])'), '{}'::text[], 'lock_sync_usage (called by the sync trigger): no API role');
select ok((select 'search_path=""' = any (p.proconfig) from pg_proc p where p.oid = 'app_private.lock_sync_usage(uuid[])'::regprocedure),
  'lock_sync_usage pins an empty search_path');

-- Alice's two lists, Carol an editor of both, with a task of hers in the first.
select tests.authenticate_as('order_alice');
insert into public.lists (id, title) select first_list, 'first' from ids union all select second_list, 'second' from ids;
select tests.clear_authentication();
insert into public.list_members (list_id, user_id, role)
select first_list, carol, 'editor' from ids union all select second_list, carol, 'editor' from ids;
select tests.authenticate_as('order_carol');
insert into public.tasks (id, list_id, title) select carols_task, first_list, 'carol''s' from ids;
select tests.clear_authentication();
select ok(not pg_temp.usage_locked((select carol from ids)), 'Carol''s usage row: written, not locked since');

-- ------------------------------------------------------------ a batch that creates and moves
-- Alice creates a task and moves Carol's into the second list: Carol is a member there,
-- so the task stays hers and her usage does not change; the move may hand a row over, so
-- the batch announces her, and her row is locked with Alice's at the create's count.
select tests.authenticate_as('order_alice');
select is(app_private.sync_apply(format($$[
  {"collection": "tasks", "kind": "insert", "columns": ["list_id", "title"], "rows": [
    {"id": "c9000000-0000-4000-8000-0000000000a1", "list_id": "%1$s", "title": "alice's"}]},
  {"collection": "tasks", "kind": "update", "columns": ["list_id"], "rows": [{"id": "%3$s", "list_id": "%2$s"}]}
]$$, (select first_list from ids), (select second_list from ids), (select carols_task from ids))::jsonb), '{"failed": []}'::jsonb,
  'Alice''s batch is written');
select is(current_setting('tidesync.usage_rows', true), '', 'the announcement was taken (and forgotten) by the first usage change');
select tests.clear_authentication();
select is(pg_temp.usage((select carol from ids)), 1, 'Carol''s usage is unchanged (the task stayed hers)');
select ok(pg_temp.usage_locked((select carol from ids)), 'yet her usage row is locked by the batch, which announced her');

select * from finish();
rollback;

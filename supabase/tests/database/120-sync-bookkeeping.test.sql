-- The sync bookkeeping (app_private.sync_*): RLS and exact policy names,
-- grants (users only ever read it, and insert their own ledger rows), and
-- per role what is readable: a member reads the versions and change entries
-- of their lists, a removed member only the entries of rows that were in the
-- list before the removal, nobody else anything; visible_scope_ids() follows
-- the lists' RLS.
begin;
select plan(81);

select from tests.create_supabase_user('bk_owner');
select from tests.create_supabase_user('bk_member');
select from tests.create_supabase_user('bk_stranger');

-- ------------------------------------------------------------ structure
select ok((select bool_and(relrowsecurity) and count(*) = 8 from pg_class
            where oid in ('app_private.sync_tables'::regclass, 'app_private.sync_memberships'::regclass, 'app_private.sync_records'::regclass,
                          'app_private.sync_changes'::regclass, 'app_private.sync_access'::regclass, 'app_private.sync_usage'::regclass,
                          'app_private.sync_horizon'::regclass, 'app_private.sync_ops'::regclass)),
  'RLS is enabled on all eight app_private.sync_* tables');
select policies_are('app_private', 'sync_tables', array['Signed-in users can read which tables sync'], 'sync_tables: one read policy');
select policies_are('app_private', 'sync_memberships', array['Signed-in users can read which tables grant access'], 'sync_memberships: one read policy');
select policies_are('app_private', 'sync_records', array['Users can read the sync state of rows in scopes they can see'], 'sync_records: one read policy');
select policies_are('app_private', 'sync_changes', array['Users can read changes in scopes they can see or have just lost'], 'sync_changes: one read policy');
select policies_are('app_private', 'sync_access', array['Users can read their own access changes'], 'sync_access: one read policy');
select policies_are('app_private', 'sync_usage', array['Users can read their own usage'], 'sync_usage: one read policy');
select policies_are('app_private', 'sync_horizon', array['Signed-in users can read the purge horizon'], 'sync_horizon: one read policy');
select policies_are('app_private', 'sync_ops', array['Users can read their own sync ops', 'Users can record their own sync ops'],
  'sync_ops: read and record own ops (no update, no delete)');

select table_privs_are('app_private', 'sync_tables', 'authenticated', array['SELECT'], 'authenticated only reads sync_tables');
select table_privs_are('app_private', 'sync_memberships', 'authenticated', array['SELECT'], 'authenticated only reads sync_memberships');
select table_privs_are('app_private', 'sync_records', 'authenticated', array['SELECT'], 'authenticated only reads sync_records');
select table_privs_are('app_private', 'sync_changes', 'authenticated', array['SELECT'], 'authenticated only reads sync_changes');
select table_privs_are('app_private', 'sync_access', 'authenticated', array['SELECT'], 'authenticated only reads sync_access');
select table_privs_are('app_private', 'sync_usage', 'authenticated', array['SELECT'], 'authenticated only reads sync_usage');
select table_privs_are('app_private', 'sync_horizon', 'authenticated', array['SELECT'], 'authenticated only reads sync_horizon');
select table_privs_are('app_private', 'sync_ops', 'authenticated', array['SELECT', 'INSERT'], 'authenticated reads and inserts sync_ops');
select is_empty($$ select c.relname || ' ' || r from pg_class c join pg_namespace n on n.oid = c.relnamespace, unnest(array['anon', 'service_role']) r
                   where n.nspname = 'app_private' and c.relname like 'sync\_%' and c.relkind = 'r'
                     and has_table_privilege(r, c.oid, 'SELECT, INSERT, UPDATE, DELETE, TRUNCATE, REFERENCES, TRIGGER') $$,
  'anon and service_role have no privilege on any sync_* table (the engine writes through SECURITY DEFINER triggers)');
select ok(not has_sequence_privilege('authenticated', 'app_private.sync_seq', 'USAGE') and not has_sequence_privilege('authenticated', 'app_private.sync_seq', 'UPDATE'),
  'authenticated cannot draw versions from sync_seq');

-- ------------------------------------------------------------ history
-- The owner's list with t1 (before the member joined), t2 (while a member),
-- then the member is removed, t1 is edited and t3 added (after the removal).
select tests.authenticate_as('bk_owner');
insert into public.lists (id, title) values ('b2000000-0000-4000-8000-000000000001', 'Shared');
insert into public.tasks (id, list_id, title) values ('b2000000-0000-4000-8000-0000000000a1', 'b2000000-0000-4000-8000-000000000001', 't1');
select tests.clear_authentication();
insert into public.list_members (list_id, user_id, role) values ('b2000000-0000-4000-8000-000000000001', tests.get_supabase_uid('bk_member'), 'editor');

select tests.authenticate_as('bk_member');
insert into public.tasks (id, list_id, title) values ('b2000000-0000-4000-8000-0000000000a2', 'b2000000-0000-4000-8000-000000000001', 't2');
insert into app_private.sync_ops (user_id, op_id, record_id, collection, type, status, version)
values ((select auth.uid()), 'b2000000-0000-4000-8000-0000000000f1', 'b2000000-0000-4000-8000-0000000000a2', 'tasks', 'upsert', 'applied', 1);
-- While a member: the scope is visible, with everything in it.
select is((select array_agg(x order by x) from unnest(app_private.visible_scope_ids()) x), (select array_agg(id order by id) from public.lists),
  'visible_scope_ids() is exactly the lists the member can read');
select ok('b2000000-0000-4000-8000-000000000001' = any (app_private.visible_scope_ids()), 'it includes the shared list');
select results_eq($$ select id::text from app_private.sync_changes where scope_id = 'b2000000-0000-4000-8000-000000000001' and collection <> 'list_members' order by id $$,
  $$ values ('b2000000-0000-4000-8000-000000000001'), ('b2000000-0000-4000-8000-0000000000a1'), ('b2000000-0000-4000-8000-0000000000a2') $$,
  'a member reads the change entries of the list (the list and both tasks)');
select results_eq($$ select count(*)::int from app_private.sync_changes where scope_id = 'b2000000-0000-4000-8000-000000000001' and collection = 'list_members' and present $$,
  array[2], 'and of its memberships (the owner''s and their own)');

select tests.authenticate_as('bk_stranger');
select is((select array_agg(x order by x) from unnest(app_private.visible_scope_ids()) x), array[(select auth.uid())],
  'a non-member''s visible scopes are only their personal list');

select tests.authenticate_as('bk_owner');
delete from public.list_members where list_id = 'b2000000-0000-4000-8000-000000000001' and user_id = tests.get_supabase_uid('bk_member');
update public.tasks set title = 't1 edited' where id = 'b2000000-0000-4000-8000-0000000000a1';
insert into public.tasks (id, list_id, title) values ('b2000000-0000-4000-8000-0000000000a3', 'b2000000-0000-4000-8000-000000000001', 't3');

-- Everything above happened in this test's one transaction; sync_records lets
-- a transaction read what it wrote itself. Age the rows, as if written earlier.
select tests.clear_authentication();
update app_private.sync_records set txid = '3'::xid8 where txid = pg_current_xact_id();

-- ------------------------------------------------------------ the owner
select tests.authenticate_as('bk_owner');
select results_eq($$ select id::text, deleted from app_private.sync_records where scope_id = 'b2000000-0000-4000-8000-000000000001' and collection <> 'list_members' order by id $$,
  $$ values ('b2000000-0000-4000-8000-000000000001', false), ('b2000000-0000-4000-8000-0000000000a1', false),
            ('b2000000-0000-4000-8000-0000000000a2', false), ('b2000000-0000-4000-8000-0000000000a3', false) $$,
  'the owner reads the sync state of the list and its tasks');
select results_eq($$ select count(*)::int from app_private.sync_changes where scope_id = 'b2000000-0000-4000-8000-000000000001' and collection <> 'list_members' and present $$,
  array[4], 'the owner reads every change entry of the list');
select results_eq($$ select present, count(*)::int from app_private.sync_changes where scope_id = 'b2000000-0000-4000-8000-000000000001' and collection = 'list_members'
                    group by present order by present $$,
  $$ values (false, 1), (true, 1) $$, 'the owner reads the memberships'' entries: their own, and the removed member''s as gone');
select set_eq($$ select scope_id, granted from app_private.sync_access $$,
  $$ values ('b2000000-0000-4000-8000-000000000001'::uuid, true), ((select auth.uid()), true) $$,
  'the owner reads only their own access changes (not the member''s removal)');
select is_empty($$ select 1 from app_private.sync_ops $$, 'the owner reads none of the member''s ledger');
select results_eq($$ select user_id from app_private.sync_usage $$, $$ values ((select auth.uid())) $$, 'the owner reads only their own usage');

-- ------------------------------------------------------------ the removed member
select tests.authenticate_as('bk_member');
select ok(not 'b2000000-0000-4000-8000-000000000001' = any (app_private.visible_scope_ids()), 'a removed member''s visible scopes no longer include the list');
select is((select array_agg(x order by x) from unnest(app_private.visible_scope_ids()) x), (select array_agg(id order by id) from public.lists),
  'visible_scope_ids() still matches the lists RLS lets the user read');
select results_eq($$ select id::text from app_private.sync_changes where scope_id = 'b2000000-0000-4000-8000-000000000001' and collection <> 'list_members' order by id $$,
  $$ values ('b2000000-0000-4000-8000-000000000001'), ('b2000000-0000-4000-8000-0000000000a1'), ('b2000000-0000-4000-8000-0000000000a2') $$,
  'a removed member reads only the entries of rows that were in the list before the removal (to remove them), not t3');
select results_eq($$ select count(*)::int from app_private.sync_changes where scope_id = 'b2000000-0000-4000-8000-000000000001' and collection = 'list_members' $$,
  array[2], 'and of the memberships that were (the owner''s and their own, now removed)');
select ok((select bool_and(c.since_seq <= a.seq) from app_private.sync_changes c join app_private.sync_access a on a.scope_id = c.scope_id
            where c.scope_id = 'b2000000-0000-4000-8000-000000000001'),
  'each of those entries has since_seq <= the revocation''s seq');
select is_empty($$ select 1 from app_private.sync_records where scope_id = 'b2000000-0000-4000-8000-000000000001' $$,
  'a removed member reads no sync state (versions) of the list any more');
select results_eq($$ select scope_id, granted from app_private.sync_access where scope_id = 'b2000000-0000-4000-8000-000000000001' $$,
  $$ values ('b2000000-0000-4000-8000-000000000001'::uuid, false) $$, 'a removed member reads their own revocation');
select results_eq($$ select op_id::text from app_private.sync_ops $$, array['b2000000-0000-4000-8000-0000000000f1'], 'a user reads their own ledger rows');
select results_eq($$ select live_records from app_private.sync_usage $$, array[0], 'a user reads their own usage (t2, left in the list, passed to its owner: 166)');

-- ------------------------------------------------------------ a non-member
select tests.authenticate_as('bk_stranger');
select is_empty($$ select 1 from app_private.sync_records where scope_id = 'b2000000-0000-4000-8000-000000000001' $$, 'a non-member reads no sync state of the list');
select is_empty($$ select 1 from app_private.sync_changes where scope_id = 'b2000000-0000-4000-8000-000000000001' $$, 'a non-member reads no change entry of the list');
select results_eq($$ select scope_id from app_private.sync_access $$, $$ values ((select auth.uid())) $$,
  'a non-member reads only their own access (to their personal list)');
select is_empty($$ select 1 from app_private.sync_ops $$, 'a non-member reads no ledger row');
select is_empty($$ select 1 from app_private.sync_usage $$, 'a non-member who wrote nothing has no usage row');
select results_eq($$ select count(*)::int from app_private.sync_tables $$,
  $$ select count(*)::int from pg_catalog.pg_trigger where tgname = 'tidesync_track_inserts' $$,
  'every signed-in user reads the whole registry of synced tables (one row per table enable_sync gave its triggers, an app''s own included)');
select results_eq($$ select count(*)::int from app_private.sync_horizon $$, array[1], 'and the purge horizon');

-- ------------------------------------------------------------ authenticated never writes the bookkeeping
select throws_ok($$ insert into app_private.sync_tables (collection, relation, scope_column) values ('evil', 'public.list_members', 'list_id') $$, '42501', null, 'authenticated cannot insert into sync_tables');
select throws_ok($$ update app_private.sync_tables set scope_column = 'id' $$, '42501', null, 'authenticated cannot update sync_tables');
select throws_ok($$ delete from app_private.sync_tables $$, '42501', null, 'authenticated cannot delete from sync_tables');
select throws_ok($$ insert into app_private.sync_memberships (relation, scope_column, user_column) values ('public.tasks', 'list_id', 'created_by') $$, '42501', null, 'authenticated cannot insert into sync_memberships');
select throws_ok($$ update app_private.sync_memberships set user_column = 'role' $$, '42501', null, 'authenticated cannot update sync_memberships');
select throws_ok($$ delete from app_private.sync_memberships $$, '42501', null, 'authenticated cannot delete from sync_memberships');
select throws_ok($$ insert into app_private.sync_records (collection, id, scope_id, version) values ('tasks', gen_random_uuid(), (select auth.uid()), 1) $$, '42501', null, 'authenticated cannot insert into sync_records');
select throws_ok($$ update app_private.sync_records set version = version + 1000 where scope_id = (select auth.uid()) $$, '42501', null, 'authenticated cannot update sync_records (not even of their own list)');
select throws_ok($$ delete from app_private.sync_records where scope_id = (select auth.uid()) $$, '42501', null, 'authenticated cannot delete from sync_records');
select throws_ok($$ insert into app_private.sync_changes (scope_id, collection, id, present, seq, txid, since_seq) values ((select auth.uid()), 'tasks', gen_random_uuid(), true, 1, '1', 1) $$, '42501', null, 'authenticated cannot insert into sync_changes');
select throws_ok($$ update app_private.sync_changes set present = false where scope_id = (select auth.uid()) $$, '42501', null, 'authenticated cannot update sync_changes');
select throws_ok($$ delete from app_private.sync_changes where scope_id = (select auth.uid()) $$, '42501', null, 'authenticated cannot delete from sync_changes');
select throws_ok($$ insert into app_private.sync_access (user_id, scope_id, granted, seq, txid) values ((select auth.uid()), 'b2000000-0000-4000-8000-000000000001', true, 1, '1') $$, '42501', null, 'authenticated cannot grant themselves access in sync_access');
select throws_ok($$ update app_private.sync_access set granted = true $$, '42501', null, 'authenticated cannot update sync_access');
select throws_ok($$ delete from app_private.sync_access $$, '42501', null, 'authenticated cannot delete from sync_access');
select throws_ok($$ insert into app_private.sync_usage (user_id, live_records) values ((select auth.uid()), 0) $$, '42501', null, 'authenticated cannot insert into sync_usage');
select throws_ok($$ update app_private.sync_usage set live_records = 0 $$, '42501', null, 'authenticated cannot reset their usage');
select throws_ok($$ delete from app_private.sync_usage $$, '42501', null, 'authenticated cannot delete from sync_usage');
select throws_ok($$ insert into app_private.sync_horizon (singleton) values (true) $$, '42501', null, 'authenticated cannot insert into sync_horizon');
select throws_ok($$ update app_private.sync_horizon set purged_txid = '0' $$, '42501', null, 'authenticated cannot lower the purge horizon');
select throws_ok($$ delete from app_private.sync_horizon $$, '42501', null, 'authenticated cannot delete the purge horizon');
select throws_ok($$ insert into app_private.sync_ops (user_id, op_id, record_id, type, status, error) values (tests.get_supabase_uid('bk_member'), gen_random_uuid(), gen_random_uuid(), 'delete', 'rejected', '{"code": "X"}') $$,
  '42501', null, 'a user cannot record an op in someone else''s ledger');
select throws_ok($$ update app_private.sync_ops set status = 'rejected' $$, '42501', null, 'nobody rewrites a recorded op');
select throws_ok($$ delete from app_private.sync_ops $$, '42501', null, 'nobody deletes recorded ops');
select throws_ok($$ select nextval('app_private.sync_seq') $$, '42501', null, 'authenticated cannot draw from sync_seq');

-- ------------------------------------------------------------ own transaction
select tests.authenticate_as('bk_owner');
delete from public.lists where id = 'b2000000-0000-4000-8000-000000000001';
select results_eq($$ select deleted from app_private.sync_records where id = 'b2000000-0000-4000-8000-000000000001' $$, array[true],
  'the transaction that deleted a list reads its tombstone (no longer through a visible scope)');

-- ------------------------------------------------------------ anon and the service role
select tests.authenticate_as_anon();
select throws_ok($$ select 1 from app_private.sync_records $$, '42501', null, 'anon cannot read sync_records');
select throws_ok($$ select 1 from app_private.sync_changes $$, '42501', null, 'anon cannot read sync_changes');
select throws_ok($$ select 1 from app_private.sync_access $$, '42501', null, 'anon cannot read sync_access');
select throws_ok($$ select 1 from app_private.sync_usage $$, '42501', null, 'anon cannot read sync_usage');
select throws_ok($$ select 1 from app_private.sync_ops $$, '42501', null, 'anon cannot read sync_ops');
select throws_ok($$ select app_private.visible_scope_ids() $$, '42501', null, 'anon cannot call visible_scope_ids()');
select throws_ok($$ select app_private.sync_apply('[]') $$, '42501', null, 'anon cannot call sync_apply()');
select tests.authenticate_as_service_role();
select throws_ok($$ select 1 from app_private.sync_records $$, '42501', null, 'the service role does not read the bookkeeping directly');
select throws_ok($$ update app_private.sync_horizon set purged_txid = '0' $$, '42501', null, 'the service role cannot move the horizon by hand');

select * from finish();
rollback;

-- The sync engine (app_private.enable_sync and its triggers): every write
-- through a synced table, whoever makes it, bumps the row's version, stamps
-- only the changed fields (with the device in tidesync.device_id), keeps a
-- change entry per scope (a move leaves a non-present entry behind), leaves
-- a tombstone on delete and counts live rows per creator. Also: the registry,
-- and the EXECUTE privileges and settings of every function of issue 8.
begin;
select plan(50);

select from tests.create_supabase_user('engine_alice');
select from tests.create_supabase_user('engine_bob');

-- ------------------------------------------------------------ registry
-- set_has, not results_eq: an app's own synced tables are in the registry too.
select set_has($$ select collection, relation::text, scope_column::text collate "default" from app_private.sync_tables $$,
  $$ values ('lists'::text, 'lists'::text, 'id'::text), ('tasks', 'tasks', 'list_id'), ('list_members', 'list_members', 'list_id') $$,
  'lists (its own scope), tasks and list_members (scoped by list_id) are synced');
select set_has($$ select relation::text, scope_column::text collate "default", user_column::text collate "default" from app_private.sync_memberships $$,
  $$ values ('list_members'::text, 'list_id'::text, 'user_id'::text) $$,
  'list_members grants access to lists');
create table public.tidesync_test_engine_no_id (k uuid primary key, s uuid not null);
alter table public.tidesync_test_engine_no_id enable row level security;
select throws_ok($$ select app_private.enable_sync('public.tidesync_test_engine_no_id', 's') $$, '22023', null,
  'enable_sync refuses a table without a uuid primary key named id');
select throws_ok($$ select app_private.enable_sync_membership('public.tasks', 'list_id', 'created_by') $$, '22023',
  'enable_sync_membership: public.tasks is synced already; register it with enable_sync_membership first, then enable_sync',
  'enable_sync_membership refuses a table synced already (its rows would stay in their writers'' usage)');

-- ------------------------------------------------------------ function privileges
-- Which of PUBLIC, anon, authenticated and service_role may call each function.
select is(tests.function_callers('app_private.visible_scope_ids()'), array['authenticated'], 'visible_scope_ids: authenticated only');
select is(tests.function_callers('app_private.sync_apply(jsonb)'), array['authenticated'], 'sync_apply: authenticated only');
select is(tests.function_callers('app_private.sync_update_sql(regclass, text[])'), array['authenticated'], 'sync_update_sql (text for sync_apply): authenticated only');
select is(tests.function_callers('app_private.sync_update_is_split(regclass, jsonb)'), array['authenticated'], 'sync_update_is_split (for sync_apply): authenticated only');
select is(tests.function_callers('app_private.my_list_ids(text)'), array['authenticated'], 'my_list_ids: authenticated only');
select is(tests.function_callers('app_private.redeem_list_invite(text)'), array['authenticated'], 'redeem_list_invite: authenticated only');
select is(tests.function_callers('public.create_list_invite(uuid, text, interval)'), array['authenticated'], 'create_list_invite: authenticated only');
select is(tests.function_callers('public.accept_list_invite(text)'), array['authenticated'], 'accept_list_invite: authenticated only');
select is(tests.function_callers('app_private.purge_sync_retention(timestamptz, integer, integer, interval)'), array['service_role'], 'purge_sync_retention: service_role only');
select is(tests.function_callers('app_private.enable_sync(regclass, name)'), '{}'::text[], 'enable_sync: no API role (migrations only)');
select is(tests.function_callers('app_private.enable_sync_membership(regclass, name, name)'), '{}'::text[], 'enable_sync_membership: no API role');
select is(tests.function_callers('app_private.disable_sync(regclass)'), '{}'::text[], 'disable_sync: no API role');
select is(tests.function_callers('app_private.track_sync_changes()'), '{}'::text[], 'track_sync_changes (trigger): no API role');
select is(tests.function_callers('app_private.track_sync_access()'), '{}'::text[], 'track_sync_access (trigger): no API role');
select is(tests.function_callers('app_private.add_list_creator_as_owner()'), '{}'::text[], 'add_list_creator_as_owner (trigger): no API role');
select is(tests.function_callers('app_private.keep_a_list_owner()'), '{}'::text[], 'keep_a_list_owner (trigger): no API role');
select is(tests.function_callers('app_private.check_list_member_update()'), '{}'::text[], 'check_list_member_update (trigger): no API role');
select is(tests.function_callers('app_private.create_personal_list_for_new_user()'), '{}'::text[], 'create_personal_list_for_new_user (trigger): no API role');

select is_empty($$
  select p.oid::regprocedure::text from pg_proc p
   where p.oid in ('app_private.visible_scope_ids()'::regprocedure, 'app_private.sync_apply(jsonb)'::regprocedure,
                   'app_private.sync_update_sql(regclass, text[])'::regprocedure, 'app_private.sync_update_is_split(regclass, jsonb)'::regprocedure,
                   'app_private.my_list_ids(text)'::regprocedure, 'app_private.redeem_list_invite(text)'::regprocedure,
                   'public.create_list_invite(uuid, text, interval)'::regprocedure, 'public.accept_list_invite(text)'::regprocedure,
                   'app_private.purge_sync_retention(timestamptz, integer, integer, interval)'::regprocedure,
                   'app_private.enable_sync(regclass, name)'::regprocedure, 'app_private.enable_sync_membership(regclass, name, name)'::regprocedure,
                   'app_private.disable_sync(regclass)'::regprocedure, 'app_private.track_sync_changes()'::regprocedure,
                   'app_private.track_sync_access()'::regprocedure, 'app_private.add_list_creator_as_owner()'::regprocedure,
                   'app_private.keep_a_list_owner()'::regprocedure, 'app_private.check_list_member_update()'::regprocedure,
                   'app_private.create_personal_list_for_new_user()'::regprocedure)
     and (p.proconfig is null or not 'search_path=""' = any (p.proconfig)) $$,
  'every function of the sync engine and the sample app pins an empty search_path');
select is_empty($$ select p.oid::regprocedure::text from pg_proc p join pg_namespace n on n.oid = p.pronamespace
                   where n.nspname = 'public' and p.prosecdef $$,
  'no SECURITY DEFINER function in the exposed schema (accept_list_invite wraps one in app_private)');

-- ------------------------------------------------------------ a write bumps the version and stamps changed fields
select tests.authenticate_as('engine_alice');
insert into public.lists (id, title) values ('a1000000-0000-4000-8000-000000000001', 'Home'), ('a1000000-0000-4000-8000-000000000002', 'Work');
select from set_config('tidesync.device_id', 'alice-phone', true);
insert into public.tasks (id, list_id, title) values ('a1000000-0000-4000-8000-0000000000a1', 'a1000000-0000-4000-8000-000000000001', 'milk');
select tests.clear_authentication();
select from set_config('tests.v1', (select version::text from app_private.sync_records where collection = 'tasks' and id = 'a1000000-0000-4000-8000-0000000000a1'), true);

select results_eq($$ select scope_id, deleted, created_by from app_private.sync_records where collection = 'tasks' and id = 'a1000000-0000-4000-8000-0000000000a1' $$,
  $$ values ('a1000000-0000-4000-8000-000000000001'::uuid, false, tests.get_supabase_uid('engine_alice')) $$,
  'an insert records the row: its scope (list) and its creator');
select is((select field_versions from app_private.sync_records s
            where s.collection = 'tasks' and s.id = 'a1000000-0000-4000-8000-0000000000a1'),
  jsonb_build_object('*', jsonb_build_object('v', current_setting('tests.v1')::bigint, 'd', 'alice-phone')),
  'an insert stamps every column at once ("*"), with the row''s version and the writing device (tidesync.device_id)');
select results_eq($$ select present, seq, since_seq from app_private.sync_changes where collection = 'tasks' and id = 'a1000000-0000-4000-8000-0000000000a1' $$,
  $$ values (true, current_setting('tests.v1')::bigint, current_setting('tests.v1')::bigint) $$,
  'an insert creates the row''s change entry in its scope, at its version');

select tests.authenticate_as('engine_alice');
select from set_config('tidesync.device_id', 'alice-laptop', true);
update public.tasks set title = 'oat milk', done = false where id = 'a1000000-0000-4000-8000-0000000000a1';
select tests.clear_authentication();
select cmp_ok((select version from app_private.sync_records where collection = 'tasks' and id = 'a1000000-0000-4000-8000-0000000000a1'),
  '>', current_setting('tests.v1')::bigint, 'an update bumps the version');
select results_eq($$ select s.field_versions -> 'title' = jsonb_build_object('v', s.version, 'd', 'alice-laptop'),
                           s.field_versions -> '*' = jsonb_build_object('v', current_setting('tests.v1')::bigint, 'd', 'alice-phone')
                           and not s.field_versions ? 'done'
                      from app_private.sync_records s where s.collection = 'tasks' and s.id = 'a1000000-0000-4000-8000-0000000000a1' $$,
  $$ values (true, true) $$,
  'only the changed field (title) gets the new version and device; the unchanged one (done, set to its own value) keeps its stamp');
select results_eq($$ select c.seq = s.version from app_private.sync_changes c join app_private.sync_records s using (collection, id)
                    where c.collection = 'tasks' and c.id = 'a1000000-0000-4000-8000-0000000000a1' $$,
  array[true], 'the change entry moves to the new version');
select from set_config('tests.v2', (select version::text from app_private.sync_records where collection = 'tasks' and id = 'a1000000-0000-4000-8000-0000000000a1'), true);

update public.tasks set title = 'oat milk' where id = 'a1000000-0000-4000-8000-0000000000a1';
select is((select version from app_private.sync_records where collection = 'tasks' and id = 'a1000000-0000-4000-8000-0000000000a1'),
  current_setting('tests.v2')::bigint, 'an update that changes nothing leaves the version alone');
select from set_config('tidesync.device_id', '', true);
update public.tasks set notes = 'from SQL' where id = 'a1000000-0000-4000-8000-0000000000a1';
select is((select field_versions -> 'notes' -> 'd' from app_private.sync_records where collection = 'tasks' and id = 'a1000000-0000-4000-8000-0000000000a1'),
  'null'::jsonb, 'a write without tidesync.device_id (direct SQL) stamps no device');
select throws_ok($$ update public.tasks set id = 'a1000000-0000-4000-8000-0000000000ff' where id = 'a1000000-0000-4000-8000-0000000000a1' $$,
  '23514', null, 'the id of a synced row cannot change (not even for a role that bypasses RLS)');

-- ------------------------------------------------------------ a move
select tests.authenticate_as('engine_alice');
update public.tasks set list_id = 'a1000000-0000-4000-8000-000000000002' where id = 'a1000000-0000-4000-8000-0000000000a1';
select tests.clear_authentication();
select results_eq($$ select scope_id, present from app_private.sync_changes where collection = 'tasks' and id = 'a1000000-0000-4000-8000-0000000000a1' order by scope_id $$,
  $$ values ('a1000000-0000-4000-8000-000000000001'::uuid, false), ('a1000000-0000-4000-8000-000000000002'::uuid, true) $$,
  'a move leaves a non-present entry in the old scope and a present one in the new');
select results_eq($$ select scope_id from app_private.sync_records where collection = 'tasks' and id = 'a1000000-0000-4000-8000-0000000000a1' $$,
  $$ values ('a1000000-0000-4000-8000-000000000002'::uuid) $$, 'the row''s scope follows the move');
select results_eq($$ select c.scope_id, c.seq = s.version, c.since_seq = c.seq
                      from app_private.sync_changes c join app_private.sync_records s using (collection, id)
                     where c.collection = 'tasks' and c.id = 'a1000000-0000-4000-8000-0000000000a1' order by c.scope_id $$,
  $$ values ('a1000000-0000-4000-8000-000000000001'::uuid, true, false), ('a1000000-0000-4000-8000-000000000002'::uuid, true, true) $$,
  'both entries carry the move''s seq; only the new scope''s entry starts there (since_seq)');

-- ------------------------------------------------------------ usage
select results_eq($$ select live_records from app_private.sync_usage where user_id = tests.get_supabase_uid('engine_alice') $$,
  array[3], 'usage counts the live rows the user created (2 lists, 1 task; the personal list was made by the signup, not the user)');
select tests.authenticate_as('engine_alice');
insert into public.tasks (id, list_id, title) values ('a1000000-0000-4000-8000-0000000000a2', 'a1000000-0000-4000-8000-000000000002', 'bread'),
                                                     ('a1000000-0000-4000-8000-0000000000a3', 'a1000000-0000-4000-8000-000000000002', 'eggs');
select tests.clear_authentication();
select results_eq($$ select live_records from app_private.sync_usage where user_id = tests.get_supabase_uid('engine_alice') $$,
  array[5], 'one statement inserting two rows counts two');

-- ------------------------------------------------------------ a delete
select tests.authenticate_as('engine_alice');
select from set_config('tidesync.device_id', 'alice-phone', true);
delete from public.tasks where id = 'a1000000-0000-4000-8000-0000000000a1';
select tests.clear_authentication();
select results_eq($$ select deleted, deleted_at is not null, field_versions = jsonb_build_object('*', jsonb_build_object('v', version, 'd', 'alice-phone'))
                      from app_private.sync_records where collection = 'tasks' and id = 'a1000000-0000-4000-8000-0000000000a1' $$,
  $$ values (true, true, true) $$, 'a delete leaves a tombstone stamped "*" with its version and device');
select is_empty($$ select scope_id from app_private.sync_changes where collection = 'tasks' and id = 'a1000000-0000-4000-8000-0000000000a1' and present $$,
  'after the delete the row is present in no scope');
select results_eq($$ select live_records from app_private.sync_usage where user_id = tests.get_supabase_uid('engine_alice') $$,
  array[4], 'a delete lowers the creator''s usage');

select tests.authenticate_as('engine_alice');
insert into public.tasks (id, list_id, title) values ('a1000000-0000-4000-8000-0000000000a1', 'a1000000-0000-4000-8000-000000000001', 'milk again');
select tests.clear_authentication();
select results_eq($$ select deleted, scope_id from app_private.sync_records where collection = 'tasks' and id = 'a1000000-0000-4000-8000-0000000000a1' $$,
  $$ values (false, 'a1000000-0000-4000-8000-000000000001'::uuid) $$, 'inserting the id again revives the tombstone');
select results_eq($$ select live_records from app_private.sync_usage where user_id = tests.get_supabase_uid('engine_alice') $$,
  array[5], 'and counts again');

-- ------------------------------------------------------------ writes by another member and by the service role
insert into public.list_members (list_id, user_id, role) values ('a1000000-0000-4000-8000-000000000002', tests.get_supabase_uid('engine_bob'), 'editor');
select tests.authenticate_as('engine_bob');
update public.tasks set done = true where id = 'a1000000-0000-4000-8000-0000000000a2';
insert into public.tasks (list_id, title) values ('a1000000-0000-4000-8000-000000000002', 'bob''s');
select tests.clear_authentication();
select results_eq($$ select created_by from app_private.sync_records where collection = 'tasks' and id = 'a1000000-0000-4000-8000-0000000000a2' $$,
  $$ values (tests.get_supabase_uid('engine_alice')) $$, 'another member''s update keeps the row''s creator');
select results_eq($$ select u.user_id, u.live_records from app_private.sync_usage u
                    where u.user_id in (tests.get_supabase_uid('engine_alice'), tests.get_supabase_uid('engine_bob')) order by u.live_records $$,
  $$ values (tests.get_supabase_uid('engine_bob'), 1), (tests.get_supabase_uid('engine_alice'), 5) $$,
  'usage is per creator: bob''s task counts for bob');
select results_eq($$ select s.created_by, s.deleted from app_private.sync_records s join public.list_members m on m.id = s.id
                    where s.collection = 'list_members' and m.list_id = 'a1000000-0000-4000-8000-000000000002' order by m.role $$,
  $$ values (null::uuid, false), (null::uuid, false) $$,
  'a membership is synced and counts for nobody (not the inviter, not the member, not the list''s creator)');
select tests.authenticate_as_service_role();
insert into public.tasks (id, list_id, title) values ('a1000000-0000-4000-8000-0000000000a4', 'a1000000-0000-4000-8000-000000000002', 'server task');
select tests.clear_authentication();
select results_eq($$ select created_by, deleted from app_private.sync_records where collection = 'tasks' and id = 'a1000000-0000-4000-8000-0000000000a4' $$,
  $$ values (null::uuid, false) $$, 'a service-role write is tracked too (no creator, counted for nobody)');

-- ------------------------------------------------------------ deleting a list
select tests.authenticate_as('engine_alice');
delete from public.lists where id = 'a1000000-0000-4000-8000-000000000002';
select tests.clear_authentication();
select is_empty($$ select 1 from app_private.sync_changes where scope_id = 'a1000000-0000-4000-8000-000000000002' and present $$,
  'deleting a list leaves none of its rows present in its scope');
select results_eq($$ select count(*)::int from app_private.sync_records
                    where scope_id = 'a1000000-0000-4000-8000-000000000002' and deleted and collection in ('lists', 'tasks') $$,
  array[5], 'the list and its four tasks are tombstones');
select results_eq($$ select count(*)::int from app_private.sync_records
                    where scope_id = 'a1000000-0000-4000-8000-000000000002' and deleted and collection = 'list_members' $$,
  array[2], 'so are its two memberships (alice''s and bob''s)');

select * from finish();
rollback;

-- The service role reads and writes the sample's tables (docs/security-model.md,
-- "Roles"): a server of the app's own inserts, upserts (what supabase-js
-- upsert() sends), updates and deletes lists, tasks and memberships. 110-112
-- pin its grants; here it writes. Its statements run every trigger of the
-- tables, whose conditions must not call a function only authenticated may
-- EXECUTE: Postgres checks that privilege for every function of an expression
-- before it evaluates any of it, so `current_user = 'authenticated' and
-- app_private.is_another_users_id(…)` refused every list the service role
-- inserted (`permission denied for function is_another_users_id`; migration
-- 20261128003410). The service role bypasses RLS and is not rechecked
-- (129-writes-judged-after-waits), so it also writes into a list it has no
-- membership of.
begin;
select plan(17);

-- First, before any list is inserted in this transaction: PL/pgSQL initialises a trigger's
-- condition once per transaction, and checks EXECUTE only then; the personal list that
-- tests.create_supabase_user's sign-up inserts (as the tables' owner) would have done it.
select tests.authenticate_as_service_role();
select lives_ok($$ insert into public.lists (id, title) values ('eb000000-0000-4000-8000-00000000000f', 'a server''s own list') $$,
  'the service role inserts a list');
select tests.clear_authentication();

select from tests.create_supabase_user('sr_alice');
select from tests.create_supabase_user('sr_bob');

create temporary table ids as select
  tests.get_supabase_uid('sr_alice') as alice, tests.get_supabase_uid('sr_bob') as bob,
  'eb000000-0000-4000-8000-00000000000a'::uuid as list_a, 'eb000000-0000-4000-8000-00000000000b'::uuid as list_b,
  'eb000000-0000-4000-8000-0000000000c1'::uuid as task;
grant select on ids to service_role;

select tests.authenticate_as_service_role();

-- ------------------------------------------------------------ lists
select lives_ok($$ insert into public.lists (id, title, created_by) values ((select list_a from ids), 'server list', (select alice from ids)) $$,
  'the service role inserts a list in a user''s name');
select results_eq($$ select m.user_id, m.role from public.list_members m where m.list_id = (select list_a from ids) $$,
  $$ select alice, 'owner'::text from ids $$, 'its creator becomes its owner, as for a list a user creates');
select lives_ok($$ insert into public.lists (id, title, created_by) values ((select list_b from ids), 'upserted', (select alice from ids))
                   on conflict (id) do update set id = excluded.id, title = excluded.title $$,
  'the service role upserts a new list (supabase-js upsert)');
select lives_ok($$ insert into public.lists (id, title) values ((select list_b from ids), 'upserted again')
                   on conflict (id) do update set id = excluded.id, title = excluded.title $$,
  'and upserts it again: an update');
select lives_ok($$ update public.lists set title = 'renamed by a server' where id = (select list_a from ids) $$,
  'the service role updates a list');
select results_eq($$ select title from public.lists where id in ((select list_a from ids), (select list_b from ids)) order by title $$,
  array['renamed by a server', 'upserted again'], 'its writes are there');

-- ------------------------------------------------------------ list_members
select lives_ok($$ insert into public.list_members (list_id, user_id, role) select list_a, bob, 'editor' from ids $$,
  'the service role adds a member');
select lives_ok($$ insert into public.list_members (list_id, user_id, role) select list_a, bob, 'viewer' from ids
                   on conflict (list_id, user_id) do update set role = excluded.role $$,
  'the service role upserts a membership');
select lives_ok($$ update public.list_members set role = 'editor' where list_id = (select list_a from ids) and user_id = (select bob from ids) $$,
  'the service role changes a member''s role');

-- ------------------------------------------------------------ tasks
select lives_ok($$ insert into public.tasks (id, list_id, title) values ((select task from ids), (select list_a from ids), 'server task') $$,
  'the service role adds a task to a list it is no member of');
select lives_ok($$ insert into public.tasks (id, list_id, title) values ((select task from ids), (select list_a from ids), 'server task, upserted')
                   on conflict (id) do update set id = excluded.id, list_id = excluded.list_id, title = excluded.title $$,
  'the service role upserts the task');
select lives_ok($$ update public.tasks set list_id = (select list_b from ids) where id = (select task from ids) $$,
  'the service role moves the task to another list');
select lives_ok($$ delete from public.tasks where id = (select task from ids) $$, 'the service role deletes the task');

-- ------------------------------------------------------------ deletes
select lives_ok($$ delete from public.list_members where list_id = (select list_a from ids) and user_id = (select bob from ids) $$,
  'the service role removes a member');
select lives_ok($$ delete from public.lists where id in ((select list_a from ids), (select list_b from ids), 'eb000000-0000-4000-8000-00000000000f') $$,
  'the service role deletes the lists');

select tests.clear_authentication();
select results_eq($$ select (select count(*)::int from public.lists where id in (select list_a from ids union select list_b from ids)),
                            (select count(*)::int from public.list_members where list_id in (select list_a from ids union select list_b from ids)),
                            (select count(*)::int from app_private.sync_records where collection = 'lists' and id in (select list_a from ids union select list_b from ids) and not deleted) $$,
  $$ values (0, 0, 0) $$, 'the lists, their memberships and their live sync records are gone');

select * from finish();
rollback;

-- app_private.lock_scopes_written_into (migration 20261128007100): the push's first step takes
-- the scope rows it writes into FOR KEY SHARE, by membership, before any usage row (a member's
-- loss of a list holds the list while it waits for the owner's usage row: a push that created a
-- row and then added one to that list deadlocked with it). It locks only the scopes the caller is
-- a member of, only through a membership table registered for that scope table, returns nothing,
-- and only authenticated may run it. Since migration 20261128008100 it is
-- app_private.lock_scopes_by_membership FOR KEY SHARE, whose FOR UPDATE a viewer's leave takes.
begin;
select plan(8);

select from tests.create_supabase_user('ls_alice');
select from tests.create_supabase_user('ls_bob');

select tests.authenticate_as('ls_alice');
insert into public.lists (id, title) values ('00000000-0000-4000-8000-000000170001', 'Alice''s');
select tests.authenticate_as('ls_bob');
insert into public.lists (id, title) values ('00000000-0000-4000-8000-000000170002', 'Bob''s');
reset role;

select ok(
  (select p.prosecdef and p.proconfig = array['search_path=""'] from pg_catalog.pg_proc p
    where p.oid = 'app_private.lock_scopes_written_into(regclass, regclass, uuid[])'::regprocedure),
  'lock_scopes_written_into is SECURITY DEFINER with an empty search_path'
);
select ok(
  has_function_privilege('authenticated', 'app_private.lock_scopes_written_into(regclass, regclass, uuid[])', 'EXECUTE')
  and not has_function_privilege('anon', 'app_private.lock_scopes_written_into(regclass, regclass, uuid[])', 'EXECUTE')
  and not has_function_privilege('service_role', 'app_private.lock_scopes_written_into(regclass, regclass, uuid[])', 'EXECUTE'),
  'only authenticated may run it'
);
select ok(
  (select p.prosecdef and p.proconfig = array['search_path=""'] from pg_catalog.pg_proc p
    where p.oid = 'app_private.lock_scopes_by_membership(regclass, regclass, uuid[], boolean)'::regprocedure),
  'lock_scopes_by_membership is SECURITY DEFINER with an empty search_path'
);
select ok(
  has_function_privilege('authenticated', 'app_private.lock_scopes_by_membership(regclass, regclass, uuid[], boolean)', 'EXECUTE')
  and not has_function_privilege('anon', 'app_private.lock_scopes_by_membership(regclass, regclass, uuid[], boolean)', 'EXECUTE')
  and not has_function_privilege('service_role', 'app_private.lock_scopes_by_membership(regclass, regclass, uuid[], boolean)', 'EXECUTE'),
  'only authenticated may run lock_scopes_by_membership'
);

-- Whose rows it locks is shown by tests/integration/usage-lock-order.test.ts (another session's
-- FOR UPDATE NOWAIT): in one transaction, as here, the lists' own inserts locked them already.
select tests.authenticate_as('ls_alice');
select is(
  app_private.lock_scopes_written_into('public.lists', 'public.list_members',
    array['00000000-0000-4000-8000-000000170001', '00000000-0000-4000-8000-000000170002', gen_random_uuid()]::uuid[])::text,
  '',
  'it returns nothing, for the caller''s list, another user''s and an unknown id alike'
);
reset role;

select tests.authenticate_as('ls_alice');
select throws_ok(
  $$ select app_private.lock_scopes_written_into('public.tasks', 'public.list_members', array['00000000-0000-4000-8000-000000170001']::uuid[]) $$,
  '22023', 'lock_scopes_by_membership: public.list_members is not a membership table of public.tasks',
  'a table the membership table does not scope is refused'
);
select throws_ok(
  $$ select app_private.lock_scopes_written_into('public.lists', 'public.tasks', array['00000000-0000-4000-8000-000000170001']::uuid[]) $$,
  '22023', 'lock_scopes_by_membership: public.tasks is not a membership table of public.lists',
  'a table that is no registered membership table is refused'
);
reset role;
set local role anon;
select throws_ok(
  $$ select app_private.lock_scopes_written_into('public.lists', 'public.list_members', array['00000000-0000-4000-8000-000000170001']::uuid[]) $$,
  '42501', null,
  'anon may not run it'
);
reset role;

select * from finish();
rollback;

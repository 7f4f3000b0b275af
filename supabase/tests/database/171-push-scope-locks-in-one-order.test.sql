-- The push's scope locks (migrations 20261128007500, 20261128008100, 20261128008200):
-- app_private.lock_scopes_in_order takes a batch's scope rows once each, in key order, FOR NO KEY
-- UPDATE through the policies for the rows it changes (answered), FOR UPDATE by membership for a
-- changed row the policies refuse that the caller leaves (p_left: what the leave's delete policy
-- takes), FOR KEY SHARE by membership for the rows it only writes into. Which rows it locks, and that lock_scopes_written_into locks nothing for a signed-out
-- session's claims, another session sees: tests/integration/usage-lock-order.test.ts (here, in
-- one transaction, the lists' own inserts and their owners' memberships locked them already).
begin;
select plan(2);

select from tests.create_supabase_user('so_alice');
select from tests.create_supabase_user('so_bob');

select tests.authenticate_as('so_alice');
insert into public.lists (id, title) values
  ('00000000-0000-4000-8000-000000171001', 'Alice''s changed'),
  ('00000000-0000-4000-8000-000000171002', 'Alice''s written into');
select tests.authenticate_as('so_bob');
insert into public.lists (id, title) values
  ('00000000-0000-4000-8000-000000171003', 'Bob''s, Alice a viewer'),
  ('00000000-0000-4000-8000-000000171005', 'Bob''s, Alice no member');
reset role;
insert into public.list_members (list_id, user_id, role)
  values ('00000000-0000-4000-8000-000000171003', tests.get_supabase_uid('so_alice'), 'viewer');

select ok(
  (select not p.prosecdef and p.proconfig = array['search_path=""'] from pg_catalog.pg_proc p
    where p.oid = 'app_private.lock_scopes_in_order(regclass, regclass, uuid[], uuid[], uuid[])'::regprocedure)
  and has_function_privilege('authenticated', 'app_private.lock_scopes_in_order(regclass, regclass, uuid[], uuid[], uuid[])', 'EXECUTE')
  and not has_function_privilege('anon', 'app_private.lock_scopes_in_order(regclass, regclass, uuid[], uuid[], uuid[])', 'EXECUTE')
  and not has_function_privilege('service_role', 'app_private.lock_scopes_in_order(regclass, regclass, uuid[], uuid[], uuid[])', 'EXECUTE'),
  'lock_scopes_in_order is SECURITY INVOKER with an empty search_path, and only authenticated may run it'
);
select tests.authenticate_as('so_alice');
select is(
  array(select app_private.lock_scopes_in_order('public.lists', 'public.list_members',
    array['00000000-0000-4000-8000-000000171001', '00000000-0000-4000-8000-000000171003', '00000000-0000-4000-8000-000000171005']::uuid[],
    array['00000000-0000-4000-8000-000000171002', '00000000-0000-4000-8000-000000171003', '00000000-0000-4000-8000-000000171001']::uuid[],
    array['00000000-0000-4000-8000-000000171003']::uuid[])),
  array['00000000-0000-4000-8000-000000171001']::uuid[],
  'it answers the changed rows the policies let the caller change: not a list they view, nor one they are no member of'
);
reset role;

select * from finish();
rollback;

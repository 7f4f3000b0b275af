-- app_private.visible_scope_ids() reads the scope tables with static SQL that
-- a trigger on the registry writes into its body (migration
-- 20261125000300_static_visible_scope_ids): the body names every scope table
-- and runs no dynamic SQL; a table made syncable (or no longer) changes it; a
-- scope table renamed after the body was written still answers, through the
-- dynamic fallback; and the answer is what the scope tables' policies let
-- the caller read.
begin;
select plan(10);

select from tests.create_supabase_user('static_alice');
select from tests.create_supabase_user('static_bob');

select is(tests.function_callers('app_private.read_visible_scope_ids()'), array['authenticated'], 'read_visible_scope_ids: authenticated only');
select is(tests.function_callers('app_private.write_visible_scope_ids()'), '{}'::text[], 'write_visible_scope_ids (trigger): no API role');
select ok((select p.proconfig @> array['search_path=""'] from pg_proc p where p.oid = 'app_private.write_visible_scope_ids()'::regprocedure)
          and (select p.proconfig @> array['search_path=""'] from pg_proc p where p.oid = 'app_private.read_visible_scope_ids()'::regprocedure),
  'both pin an empty search_path');

-- ------------------------------------------------------------ the body
select ok((select p.prosrc ~ 'return array\(select s\.id from \S+ s( union all select s\.id from \S+ s)*\);'
               and p.prosrc ~ 'select s\.id from public\.lists s\M' and p.prosrc !~* '\mexecute\M'
             from pg_proc p where p.oid = 'app_private.visible_scope_ids()'::regprocedure),
  'the body reads public.lists (and an app''s own scope tables, if any) with static SQL, no EXECUTE');

select tests.authenticate_as('static_alice');
insert into public.lists (id, title) values ('c1000000-0000-4000-8000-000000000001', 'Shared');
select tests.clear_authentication();
insert into public.list_members (list_id, user_id, role) values ('c1000000-0000-4000-8000-000000000001', tests.get_supabase_uid('static_bob'), 'viewer');
select tests.authenticate_as('static_bob');
select is((select array_agg(x order by x) from unnest(app_private.visible_scope_ids()) x), (select array_agg(id order by id) from public.lists),
  'it answers exactly the lists the caller can read');
select is((select array_agg(x order by x) from unnest(app_private.visible_scope_ids()) x),
          (select array_agg(x order by x) from unnest(app_private.read_visible_scope_ids()) x),
  'the same answer as the dynamic read');
select tests.clear_authentication();

-- ------------------------------------------------------------ a new scope table rewrites it
create table public.tidesync_test_static_boards (id uuid primary key default gen_random_uuid(), title text not null default '');
alter table public.tidesync_test_static_boards enable row level security;
create policy "Everyone reads boards" on public.tidesync_test_static_boards for select to authenticated using (true);
grant select on public.tidesync_test_static_boards to authenticated;
insert into public.tidesync_test_static_boards (id) values ('c2000000-0000-4000-8000-000000000001');
select app_private.enable_sync('public.tidesync_test_static_boards', 'id');
select ok((select p.prosrc ~ 'public\.tidesync_test_static_boards' from pg_proc p where p.oid = 'app_private.visible_scope_ids()'::regprocedure),
  'enable_sync of a scope table writes its read into the body');
select tests.authenticate_as('static_bob');
select ok('c2000000-0000-4000-8000-000000000001' = any (app_private.visible_scope_ids()), 'and its rows are visible scopes at once');
select tests.clear_authentication();

-- ------------------------------------------------------------ renamed after the body was written: the dynamic read answers
alter table public.tidesync_test_static_boards rename to tidesync_test_static_boards_renamed;
select tests.authenticate_as('static_bob');
select ok('c2000000-0000-4000-8000-000000000001' = any (app_private.visible_scope_ids())
          and 'c1000000-0000-4000-8000-000000000001' = any (app_private.visible_scope_ids()),
  'a scope table renamed since still answers, through the fallback');
select tests.clear_authentication();

select app_private.disable_sync('public.tidesync_test_static_boards_renamed');
select ok((select p.prosrc !~ 'tidesync_test_static_boards' from pg_proc p where p.oid = 'app_private.visible_scope_ids()'::regprocedure),
  'disable_sync takes it out of the body again');

select * from finish();
rollback;

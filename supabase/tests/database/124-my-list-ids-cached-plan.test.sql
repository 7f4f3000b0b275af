-- app_private.my_list_ids() is PL/pgSQL (migration
-- 20261126000400_my_list_ids_cached_plan), so its query is planned once per
-- session instead of on every call: same answers per role, same security.
--   - language, SECURITY DEFINER, empty search_path, callers;
--   - the lists of the caller with at least the role asked, for an owner, an
--     editor, a viewer and a stranger of one list; nothing without a caller;
--   - many calls in one session answer alike (the cached plan, the caller
--     read at each call: another user's claims give their lists).
begin;
select plan(12);

select from tests.create_supabase_user('mli_owner');
select from tests.create_supabase_user('mli_editor');
select from tests.create_supabase_user('mli_viewer');
select from tests.create_supabase_user('mli_stranger');

select is((select l.lanname::text from pg_proc p join pg_language l on l.oid = p.prolang where p.oid = 'app_private.my_list_ids(text)'::regprocedure),
  'plpgsql', 'my_list_ids is PL/pgSQL (its plan is kept for the session)');
select ok((select p.proconfig @> array['search_path=""'] and p.prosecdef and p.provolatile = 's' from pg_proc p where p.oid = 'app_private.my_list_ids(text)'::regprocedure),
  'my_list_ids: STABLE, SECURITY DEFINER with an empty search_path');
select is(tests.function_callers('app_private.my_list_ids(text)'), array['authenticated'], 'my_list_ids: authenticated only');

select tests.authenticate_as('mli_owner');
insert into public.lists (id, title) values ('c4000000-0000-4000-8000-000000000001', 'Shared');
select tests.clear_authentication();
insert into public.list_members (list_id, user_id, role) values
  ('c4000000-0000-4000-8000-000000000001', tests.get_supabase_uid('mli_editor'), 'editor'),
  ('c4000000-0000-4000-8000-000000000001', tests.get_supabase_uid('mli_viewer'), 'viewer');

-- Which of {the shared list, the caller's personal list} my_list_ids(role) names, as text.
create function pg_temp.named(p_user text, p_role text) returns text language sql as $$
  select array_to_string(array[
    case when 'c4000000-0000-4000-8000-000000000001' = any (app_private.my_list_ids(p_role)) then 'shared' end,
    case when tests.get_supabase_uid(p_user) = any (app_private.my_list_ids(p_role)) then 'personal' end], ',')
$$;

select tests.authenticate_as('mli_owner');
select is(pg_temp.named('mli_owner', 'owner') || ' / ' || pg_temp.named('mli_owner', 'editor') || ' / ' || pg_temp.named('mli_owner', 'viewer'),
  'shared,personal / shared,personal / shared,personal', 'the owner: both lists at every role');
select tests.authenticate_as('mli_editor');
select is(pg_temp.named('mli_editor', 'owner'), 'personal', 'an editor is not an owner of the shared list');
select is(pg_temp.named('mli_editor', 'editor') || ' / ' || pg_temp.named('mli_editor', 'viewer'), 'shared,personal / shared,personal',
  'an editor: the shared list as editor and viewer');
select tests.authenticate_as('mli_viewer');
select is(pg_temp.named('mli_viewer', 'owner') || ' / ' || pg_temp.named('mli_viewer', 'editor'), 'personal / personal',
  'a viewer is neither owner nor editor of the shared list');
select is(pg_temp.named('mli_viewer', 'viewer'), 'shared,personal', 'a viewer: the shared list as viewer');
select tests.authenticate_as('mli_stranger');
select is(pg_temp.named('mli_stranger', 'viewer'), 'personal', 'a stranger: only their own list');
select is(array_length(app_private.my_list_ids(), 1), 1, 'the default role is viewer');

-- The same session, the caller changed between calls: each call reads the caller anew.
select tests.authenticate_as('mli_viewer');
select is((select count(*)::integer from generate_series(1, 50) g where 'c4000000-0000-4000-8000-000000000001' = any (app_private.my_list_ids('viewer'))),
  50, 'fifty calls in a row answer alike');
select tests.clear_authentication();
select from set_config('request.jwt.claims', '', true);
select is(app_private.my_list_ids('viewer'), '{}'::uuid[], 'no caller: no lists');

select * from finish();
rollback;

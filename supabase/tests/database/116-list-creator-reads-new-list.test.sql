-- The creator of a list reads it back in the statement that creates it
-- (migration 20261127000700): supabase-js's insert().select() is PostgREST's
-- insert … returning inside a CTE, and the select policy is checked on the
-- returned row before the AFTER trigger makes the creator its owner. Nobody
-- else gains anything, and once the statement is over, membership alone decides.
begin;
select plan(12);

select from tests.create_supabase_user('cr_creator');
select from tests.create_supabase_user('cr_other');

-- ------------------------------------------------------------ pinned: the policy and the helper's privileges
select is((select qual from pg_catalog.pg_policies where schemaname = 'public' and tablename = 'lists' and policyname = 'Members can read their lists' and cmd = 'SELECT'),
  '((id = ANY (( SELECT app_private.my_list_ids(''viewer''::text) AS my_list_ids)::uuid[])) OR ((created_by = ( SELECT app_private.live_uid() AS live_uid)) AND (NOT app_private.list_has_members(id))))',
  'the lists select policy: members, or the creator (while their session counts: migration 20261128001800) of a list that has no member yet');
select is(tests.function_callers('app_private.list_has_members(uuid)'), array['authenticated'], 'list_has_members: EXECUTE for authenticated only');
select is((select p.prosecdef and p.proconfig = array['search_path=""'] and p.provolatile = 's' from pg_catalog.pg_proc p where p.oid = 'app_private.list_has_members(uuid)'::regprocedure),
  true, 'list_has_members is STABLE SECURITY DEFINER with search_path ''''');

-- ------------------------------------------------------------ as PostgREST sends insert().select()
select tests.authenticate_as('cr_creator');
-- The statement PostgREST (v12) builds for POST /lists with Prefer: return=representation.
select results_eq($$
  with pgrst_source as (
    insert into "public"."lists"("id", "title")
    select pgrst_body."id", pgrst_body."title"
      from (select '[{"id": "00000000-0000-4000-8000-0000000c7ea1", "title": "Made with insert().select()"}]'::json as json_data) pgrst_payload,
           lateral (select "id", "title" from json_populate_recordset(null::"public"."lists", pgrst_payload.json_data)) pgrst_body
    returning "public"."lists".*)
  select "lists"."id", "lists"."title" from "pgrst_source" as "lists" $$,
  $$ values ('00000000-0000-4000-8000-0000000c7ea1'::uuid, 'Made with insert().select()'::text) $$,
  'the creator reads the new list back (PostgREST''s CTE, return=representation)');
select results_eq($$ insert into public.lists (title) values ('Plain returning') returning title $$, $$ values ('Plain returning'::text) $$,
  'insert … returning as the creator');
select results_eq($$ select role from public.list_members where list_id = '00000000-0000-4000-8000-0000000c7ea1' $$, $$ values ('owner'::text) $$,
  'and is its owner afterwards');

-- ------------------------------------------------------------ nobody else gains anything
select tests.authenticate_as('cr_other');
select is((select count(*)::integer from public.lists where id = '00000000-0000-4000-8000-0000000c7ea1'), 0, 'another user does not see it');
select is('00000000-0000-4000-8000-0000000c7ea1'::uuid = any (app_private.visible_scope_ids()), false, 'nor among their visible scopes');
select is(app_private.list_has_members('00000000-0000-4000-8000-0000000c7ea1'), true, 'list_has_members answers only true or false');

-- ------------------------------------------------------------ a creator who left sees nothing
select tests.clear_authentication();
insert into public.list_members (list_id, user_id, role) values ('00000000-0000-4000-8000-0000000c7ea1', tests.get_supabase_uid('cr_other'), 'owner');
select tests.authenticate_as('cr_creator');
select lives_ok($$ delete from public.list_members where list_id = '00000000-0000-4000-8000-0000000c7ea1' and user_id = (select auth.uid()) $$,
  'the creator leaves the list (another owner keeps it)');
select is((select count(*)::integer from public.lists where id = '00000000-0000-4000-8000-0000000c7ea1'), 0, 'the creator who left no longer sees it');
select is('00000000-0000-4000-8000-0000000c7ea1'::uuid = any (app_private.visible_scope_ids()), false, 'nor among their visible scopes');

select * from finish();
rollback;

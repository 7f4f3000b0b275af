-- Every id of a scope table (a list's) a user may not create answers alike, as
-- taken (23505 on lists_pkey), also to supabase-js upsert() (insert … on
-- conflict (id) do update, or do nothing): a live list they are no member of,
-- a deleted list's id while its history is kept, another user's id (their
-- personal list's). Before migration 20261128002100 the upsert of a live list's
-- id went on to its update and a policy refused it (42501), telling a live
-- list from the others. A member's upsert still updates the list.
begin;
select plan(10);

select from tests.create_supabase_user('ta_owner');
select from tests.create_supabase_user('ta_editor');
select from tests.create_supabase_user('ta_stranger');

select tests.authenticate_as('ta_owner');
insert into public.lists (id, title) values ('d3000000-0000-4000-8000-000000000001', 'Live');
insert into public.lists (id, title) values ('d3000000-0000-4000-8000-000000000002', 'Deleted');
delete from public.lists where id = 'd3000000-0000-4000-8000-000000000002';
select tests.clear_authentication();
insert into public.list_members (list_id, user_id, role) values
  ('d3000000-0000-4000-8000-000000000001', tests.get_supabase_uid('ta_editor'), 'editor');

-- ------------------------------------------------------------ a stranger: every taken id alike
select tests.authenticate_as('ta_stranger');
select throws_ok($$ insert into public.lists (id, title) values ('d3000000-0000-4000-8000-000000000001', 'x')
                    on conflict (id) do update set id = excluded.id, title = excluded.title $$,
  '23505', 'duplicate key value violates unique constraint "lists_pkey"', 'upsert of a live list''s id: taken');
select throws_ok($$ insert into public.lists (id, title) values ('d3000000-0000-4000-8000-000000000002', 'x')
                    on conflict (id) do update set id = excluded.id, title = excluded.title $$,
  '23505', 'duplicate key value violates unique constraint "lists_pkey"', 'upsert of a deleted list''s id: taken');
select throws_ok(format($$ insert into public.lists (id, title) values (%L, 'x')
                    on conflict (id) do update set id = excluded.id, title = excluded.title $$, tests.get_supabase_uid('ta_owner')),
  '23505', 'duplicate key value violates unique constraint "lists_pkey"', 'upsert of another user''s id: taken');
select throws_ok($$ insert into public.lists (id, title) values ('d3000000-0000-4000-8000-000000000001', 'x') on conflict do nothing $$,
  '23505', 'duplicate key value violates unique constraint "lists_pkey"', 'upsert ignoring duplicates of a live list''s id: taken');
select throws_ok($$ insert into public.lists (id, title) values ('d3000000-0000-4000-8000-000000000001', 'x') $$,
  '23505', 'duplicate key value violates unique constraint "lists_pkey"', 'plain insert of a live list''s id: taken');
select lives_ok($$ insert into public.lists (id, title) values ('d3000000-0000-4000-8000-000000000003', 'Mine')
                   on conflict (id) do update set id = excluded.id, title = excluded.title $$,
  'upsert of a new id creates the list');

-- ------------------------------------------------------------ members: the upsert updates
select tests.authenticate_as('ta_editor');
select lives_ok($$ insert into public.lists (id, title) values ('d3000000-0000-4000-8000-000000000001', 'Renamed by the editor')
                   on conflict (id) do update set id = excluded.id, title = excluded.title $$,
  'an editor''s upsert of the list updates it');
select tests.authenticate_as('ta_owner');
select lives_ok($$ insert into public.lists (id, title) values ('d3000000-0000-4000-8000-000000000001', 'Renamed by the owner')
                   on conflict (id) do update set id = excluded.id, title = excluded.title $$,
  'the owner''s upsert of the list updates it');
select results_eq($$ select title from public.lists where id = 'd3000000-0000-4000-8000-000000000001' $$,
  array['Renamed by the owner'], 'both upserts updated the list');
select throws_ok($$ insert into public.lists (id, title) values ('d3000000-0000-4000-8000-000000000001', 'again') $$,
  '23505', null, 'a member''s plain insert of the live id: taken (its primary key)');

select * from finish();
rollback;

-- An operator's delete of a user (`delete from auth.users`, as the dashboard
-- or auth.admin.deleteUser does) leaves no Realtime poke whose topic names
-- the user (docs/security-model.md: forget_pokes_of_deleted_users "removes
-- the pokes whose topic names the deleted user"): also the poke of their
-- personal list (whose id is the user's) that the delete's own cascade sends
-- after that trigger ran. Migration 20261128007400.
begin;
select plan(4);

select from tests.create_supabase_user('gone_user');
select from tests.create_supabase_user('gone_neighbour');

-- What the user wrote: a task in their personal list and a list of their own.
select tests.authenticate_as('gone_user');
insert into public.lists (id, title) values ('e1710000-0000-4000-8000-000000000001', 'Own');
insert into public.tasks (id, list_id, title)
values ('e1710000-0000-4000-8000-000000000002', tests.get_supabase_uid('gone_user'), 'personal');
select tests.clear_authentication();
select tests.authenticate_as('gone_neighbour');
insert into public.tasks (id, list_id, title)
values ('e1710000-0000-4000-8000-000000000003', tests.get_supabase_uid('gone_neighbour'), 'stays');
select tests.clear_authentication();

select ok(exists (select 1 from realtime.messages where topic = 'tidesync:scope:' || tests.get_supabase_uid('gone_user')),
  'before: the personal list of the user has pokes');

-- The delete is its own transaction in production: forget which topics this
-- one already poked (send_sync_pokes pokes a topic once per transaction).
select set_config('tidesync.pokes_sent', '', true);
create temp table gone as select tests.get_supabase_uid('gone_user') as id;
delete from auth.users where id = (select id from gone);

select is((select count(*)::int from realtime.messages m, gone g where m.topic like '%' || g.id::text || '%'), 0,
  'after an operator delete no poke names the deleted user (user topic, personal list topic)');
select is((select count(*)::int from realtime.messages m, gone g where m.payload::text like '%' || g.id::text || '%'), 0,
  'nor does any poke''s payload');
select ok(exists (select 1 from realtime.messages where topic = 'tidesync:scope:' || tests.get_supabase_uid('gone_neighbour')),
  'another user''s pokes stay');

select * from finish();
rollback;

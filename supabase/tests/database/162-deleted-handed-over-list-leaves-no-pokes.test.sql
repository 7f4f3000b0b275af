-- A personal list handed over at its owner's deletion keeps the deleted
-- user's id, and its pokes name it (tidesync:scope:<id>). When that list is
-- deleted later, by its new owner or with their account, its pokes go with
-- it: nobody may read them any more, and they were the last rows naming the
-- deleted user outside app_private.retired_user_ids
-- (docs/account-deletion.md). An ordinary list's delete leaves the pokes of
-- other lists alone. Migration 20261128009900.
begin;
select plan(6);

select from tests.create_supabase_user('dhl_first');
select from tests.create_supabase_user('dhl_heir');
select from tests.create_supabase_user('dhl_second');
select from tests.create_supabase_user('dhl_second_heir');
select from tests.create_supabase_user('dhl_other');

create temporary table ids (name text primary key, id uuid) on commit drop;
insert into ids select n, tests.get_supabase_uid(n) from unnest(array['dhl_first', 'dhl_second', 'dhl_other', 'dhl_second_heir']) n;
grant select on ids to public;

create function pg_temp.pokes_naming(p_name text) returns integer language sql as $$
  select count(*)::integer from realtime.messages m, ids i where i.name = p_name and m.topic like '%' || i.id::text || '%'
$$;
-- Each write below is its own transaction in production (send_sync_pokes
-- pokes a topic once per transaction).
create function pg_temp.next_transaction() returns void language sql as $$
  select set_config('tidesync.pokes_sent', '', true);
$$;

-- ------------------------------------------------------------ deleted by its new owner
insert into public.list_members (list_id, user_id, role)
select id, tests.get_supabase_uid('dhl_heir'), 'editor' from ids where name = 'dhl_first';
delete from auth.users where id = (select id from ids where name = 'dhl_first');
select pg_temp.next_transaction();
select tests.authenticate_as('dhl_heir');
insert into public.tasks (list_id, title) select id, 'after the hand-over' from ids where name = 'dhl_first';
select tests.clear_authentication();
select cmp_ok(pg_temp.pokes_naming('dhl_first'), '>=', 2,
  'the handed-over list''s topic holds the hand-over''s poke and a later write''s, each naming the deleted user');

-- an ordinary list of someone else, poked in an earlier transaction
select pg_temp.next_transaction();
select tests.authenticate_as('dhl_other');
insert into public.tasks (list_id, title) select id, 'elsewhere' from ids where name = 'dhl_other';
select tests.clear_authentication();
create temporary table other_pokes on commit drop as
  select m.id from realtime.messages m, ids i where i.name = 'dhl_other' and m.topic = 'tidesync:scope:' || i.id::text;

select pg_temp.next_transaction();
select tests.authenticate_as('dhl_heir');
delete from public.lists where id = (select id from ids where name = 'dhl_first');
select tests.clear_authentication();
select is(pg_temp.pokes_naming('dhl_first'), 0,
  'once its new owner deletes the list, no poke names the deleted user');
select set_eq($$ select m.id from realtime.messages m, ids i where i.name = 'dhl_other' and m.topic = 'tidesync:scope:' || i.id::text $$,
  $$ select id from other_pokes $$, 'while another list''s pokes stay');

-- ------------------------------------------------------------ deleted with its new owner's account
insert into public.list_members (list_id, user_id, role)
select id, tests.get_supabase_uid('dhl_second_heir'), 'editor' from ids where name = 'dhl_second';
delete from auth.users where id = (select id from ids where name = 'dhl_second');
select pg_temp.next_transaction();
select tests.authenticate_as('dhl_second_heir');
insert into public.tasks (list_id, title) select id, 'after the hand-over' from ids where name = 'dhl_second';
select tests.clear_authentication();
select cmp_ok(pg_temp.pokes_naming('dhl_second'), '>=', 2, 'the second handed-over list is poked too');
select pg_temp.next_transaction();
delete from auth.users where id = (select id from ids where name = 'dhl_second_heir');
select is((select count(*)::integer from public.lists where id = (select id from ids where name = 'dhl_second')), 0,
  'the list goes with its only remaining member''s account');
select is(pg_temp.pokes_naming('dhl_second'), 0,
  'and so do its pokes: none names the first deleted user');

select * from finish();
rollback;

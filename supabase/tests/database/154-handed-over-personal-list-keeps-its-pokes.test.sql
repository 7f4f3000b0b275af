-- A personal list shared and handed over at its owner's account deletion
-- keeps its Realtime pokes: a write in it pokes tidesync:scope:<its id> (the
-- deleted user's id, kept in app_private.retired_user_ids), so its members
-- learn of it without waiting for their next poll, however the owner was
-- deleted (the account purge, an operator's delete of the auth.users row).
-- What migration 20261128007400 keeps off the topic is only a list with no
-- member, whose topic nobody may join: the one deleted with its user (pgTAP
-- 171), or a handed-over one deleted later, whose members are told on their
-- own topics.
-- Migrations 20261128009000 (later writes), 20261128009300 (the hand-over itself).
begin;
select plan(11);

select from tests.create_supabase_user('hop_owner');
select from tests.create_supabase_user('hop_editor');
select from tests.create_supabase_user('hop_viewer');
select from tests.create_supabase_user('hop_dropped');
select from tests.create_supabase_user('hop_heir');

create temporary table ids (name text primary key, id uuid) on commit drop;
insert into ids select n, tests.get_supabase_uid(n) from unnest(array['hop_owner', 'hop_dropped', 'hop_viewer']) n;
grant select on ids to public;

-- Pokes on a topic since the last clear; each write below is its own
-- transaction in production (send_sync_pokes pokes a topic once per transaction).
create function pg_temp.pokes_on(p_topic text) returns integer language sql as $$
  select count(*)::integer from realtime.messages where topic = p_topic
$$;
create function pg_temp.start_transaction() returns void language sql as $$
  delete from realtime.messages;
  select set_config('tidesync.pokes_sent', '', true);
$$;

-- ------------------------------------------------------------ purged by the account purge
-- The owner shares their personal list (id = their user id) with an editor and a viewer.
insert into public.list_members (list_id, user_id, role) values
  ((select id from ids where name = 'hop_owner'), tests.get_supabase_uid('hop_editor'), 'editor'),
  ((select id from ids where name = 'hop_owner'), tests.get_supabase_uid('hop_viewer'), 'viewer');
select tests.authenticate_as('hop_owner');
select from app_private.request_account_deletion(7);
select tests.clear_authentication();
select pg_temp.start_transaction();
select from set_config('role', (select nspowner::regrole::text from pg_namespace where nspname = 'app_private'), true);
select results_eq($$ select users_deleted, lists_handed_over from app_private.run_account_deletions(now() + interval '8 days') $$,
  $$ values (1, 1) $$, 'the purge deletes the owner and hands their shared personal list over');
select tests.clear_authentication();
select is(pg_temp.pokes_on('tidesync:scope:' || (select id from ids where name = 'hop_owner')), 1,
  'the hand-over pokes the list''s topic: its members learn of their new owner (migration 20261128009300)');
select is(pg_temp.pokes_on('tidesync:user:' || (select id from ids where name = 'hop_owner')), 0,
  'while nothing is left on the deleted user''s own topic');

select pg_temp.start_transaction();
select tests.authenticate_as('hop_editor');
insert into public.tasks (list_id, title) select id, 'after the purge' from ids where name = 'hop_owner';
select tests.clear_authentication();
select is(pg_temp.pokes_on('tidesync:scope:' || (select id from ids where name = 'hop_owner')), 1,
  'a write in the handed-over personal list pokes its topic');
select tests.authenticate_as('hop_viewer');
select ok(app_private.may_receive_poke('tidesync:scope:' || (select id from ids where name = 'hop_owner')),
  'which its viewer joins and so learns of the write');
select tests.clear_authentication();

-- ------------------------------------------------------------ deleted by an operator (`delete from auth.users`)
insert into public.list_members (list_id, user_id, role) values
  ((select id from ids where name = 'hop_dropped'), tests.get_supabase_uid('hop_heir'), 'viewer');
select pg_temp.start_transaction();
delete from auth.users where id = (select id from ids where name = 'hop_dropped');
select is(pg_temp.pokes_on('tidesync:scope:' || (select id from ids where name = 'hop_dropped')), 1,
  'an operator''s delete that hands the list over pokes its topic too');
select pg_temp.start_transaction();
select tests.authenticate_as('hop_heir');
insert into public.tasks (list_id, title) select id, 'after the operator''s delete' from ids where name = 'hop_dropped';
select tests.clear_authentication();
select is(pg_temp.pokes_on('tidesync:scope:' || (select id from ids where name = 'hop_dropped')), 1,
  'a write in a personal list handed over at an operator''s delete pokes its topic too');

-- ------------------------------------------------------------ the handed-over list deleted by its new owner
select pg_temp.start_transaction();
select tests.authenticate_as('hop_editor');
delete from public.lists where id = (select id from ids where name = 'hop_owner');
select tests.clear_authentication();
select is((select count(*)::integer from realtime.messages m, ids i where i.name = 'hop_owner' and m.topic like '%' || i.id::text || '%'), 0,
  'once the list is gone, no poke names the deleted user''s id: nobody may join its topic any more');
select is(pg_temp.pokes_on('tidesync:user:' || (select id from ids where name = 'hop_viewer')), 1,
  'its viewer learns of the delete on their own topic');

-- ------------------------------------------------------------ kept only by a member who can never sign in
-- The only other member was soft-deleted (auth.admin.deleteUser(id, true): deleted_at set,
-- sessions deleted); the list passes to them, and nobody may join its topic (migration 20261128009610).
select from tests.create_supabase_user('hop_alone');
select from tests.create_supabase_user('hop_soft');
insert into ids values ('hop_alone', tests.get_supabase_uid('hop_alone'));
insert into public.list_members (list_id, user_id, role) values (tests.get_supabase_uid('hop_alone'), tests.get_supabase_uid('hop_soft'), 'editor');
update auth.users set deleted_at = now() where id = tests.get_supabase_uid('hop_soft');
delete from auth.sessions where user_id = tests.get_supabase_uid('hop_soft');
select pg_temp.start_transaction();
delete from auth.users where id = (select id from ids where name = 'hop_alone');
select results_eq($$ select role from public.list_members where list_id = (select id from ids where name = 'hop_alone') $$,
  $$ values ('owner') $$, 'a list whose only other member was soft-deleted passes to them');
select is((select count(*)::integer from realtime.messages m, ids i where i.name = 'hop_alone' and m.topic like '%' || i.id::text || '%'), 0,
  'and keeps no poke naming the deleted user: nobody can join its topic');

select * from finish();
rollback;

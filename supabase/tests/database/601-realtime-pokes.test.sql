-- Realtime pokes (migration 20261122060100): who may receive the pokes of a
-- topic, checked the way Supabase Realtime authorizes a private channel join
-- (it inserts a probe message as its admin, then, as the joining user with
-- realtime.topic() set to the topic, selects it: the policy decides), per
-- role: anon, a list's owner, an editor, a stranger, a removed member,
-- service_role; and what a write sends (a data-free poke per scope and user,
-- once per transaction). Clients cannot send on these topics, and an app's own
-- Broadcast policies open none of this (migration 20261126003400).
begin;
select plan(35);

select from tests.create_supabase_user('poke_owner');
select from tests.create_supabase_user('poke_editor');
select from tests.create_supabase_user('poke_stranger');
select from tests.create_supabase_user('poke_removed');

select tests.authenticate_as('poke_owner');
insert into public.lists (id, title) values ('e1000000-0000-4000-8000-000000000001', 'Shared');
select tests.clear_authentication();
insert into public.list_members (list_id, user_id, role) values
  ('e1000000-0000-4000-8000-000000000001', tests.get_supabase_uid('poke_editor'), 'editor'),
  ('e1000000-0000-4000-8000-000000000001', tests.get_supabase_uid('poke_removed'), 'viewer');
delete from public.list_members
 where list_id = 'e1000000-0000-4000-8000-000000000001' and user_id = tests.get_supabase_uid('poke_removed');

-- ------------------------------------------------------------ structure
select policies_are('realtime', 'messages', array[
    'Members receive the sync pokes of their lists and their own',
    'Only signed-in users receive on tidesync''s topics',
    'Only members receive tidesync''s pokes, each on its own topic',
    'Only the database sends on tidesync''s topics',
    'Nobody rewrites tidesync''s sync pokes'],
  'realtime.messages has exactly the pokes'' policies: members receive; restrictive guards for receiving, sending, rewriting');
select is((select array_agg(policyname::text order by policyname) from pg_policies
            where schemaname = 'realtime' and tablename = 'messages' and permissive = 'RESTRICTIVE'),
  array['Nobody rewrites tidesync''s sync pokes', 'Only members receive tidesync''s pokes, each on its own topic',
        'Only signed-in users receive on tidesync''s topics', 'Only the database sends on tidesync''s topics'],
  'the guards are restrictive: they hold whatever permissive policies an app adds');
select ok((select relrowsecurity from pg_class where oid = 'realtime.messages'::regclass), 'RLS is enabled on realtime.messages');
select ok(not has_function_privilege('anon', 'app_private.may_receive_poke(text)', 'execute')
      and has_function_privilege('authenticated', 'app_private.may_receive_poke(text)', 'execute'),
  'the policy''s helper runs for signed-in users only');
select ok(not has_function_privilege('authenticated', 'app_private.send_sync_pokes()', 'execute'),
  'nobody calls the poke trigger function directly');

-- ------------------------------------------------------------ joining a channel, per role
-- Realtime's probe: a message of the topic, inserted by Realtime itself (here: the test's superuser).
create function pg_temp.can_join(p_topic text) returns boolean language plpgsql as $$
declare
  v_id uuid := gen_random_uuid();
  v_role text := current_setting('role');
  v_claims text := current_setting('request.jwt.claims', true);
  v_seen boolean;
begin
  reset role;
  insert into realtime.messages (id, topic, extension) values (v_id, p_topic, 'broadcast');
  execute format('set local role %I', v_role);
  perform set_config('request.jwt.claims', coalesce(v_claims, ''), true);
  perform set_config('realtime.topic', p_topic, true);
  select exists (select 1 from realtime.messages m where m.id = v_id) into v_seen;
  return v_seen;
end;
$$;
grant execute on function pg_temp.can_join(text) to anon, authenticated, service_role;

select tests.authenticate_as('poke_owner');
select ok(pg_temp.can_join('tidesync:scope:e1000000-0000-4000-8000-000000000001'), 'the owner may join the list''s topic');
select ok(pg_temp.can_join('tidesync:user:' || tests.get_supabase_uid('poke_owner')), 'a user may join their own user topic');
select ok(not pg_temp.can_join('tidesync:user:' || tests.get_supabase_uid('poke_editor')), 'but not another user''s');
select tests.authenticate_as('poke_editor');
select ok(pg_temp.can_join('tidesync:scope:e1000000-0000-4000-8000-000000000001'), 'an editor (a member) may join the list''s topic');
select ok(pg_temp.can_join('tidesync:scope:' || tests.get_supabase_uid('poke_editor')), 'and the topic of their personal list');
select ok(not pg_temp.can_join('tidesync:scope:' || tests.get_supabase_uid('poke_owner')), 'not the owner''s personal list');
select tests.authenticate_as('poke_stranger');
select ok(not pg_temp.can_join('tidesync:scope:e1000000-0000-4000-8000-000000000001'), 'a stranger may not join the list''s topic');
select ok(not pg_temp.can_join('tidesync:scope:E1000000-0000-4000-8000-000000000001'), 'nor its upper-case spelling');
select ok(not pg_temp.can_join('tidesync:scope:not-a-uuid'), 'a malformed topic is refused, not an error');
select ok(not pg_temp.can_join('some-app-topic'), 'other topics are left to other policies');
-- realtime.topic() naming a topic the caller may join (Realtime's join, or the
-- rest of a transaction after realtime.send set it) shows no row of another topic.
select tests.clear_authentication();
insert into realtime.messages (id, topic, extension, payload) values
  ('e3000000-0000-4000-8000-000000000001', 'tidesync:user:' || tests.get_supabase_uid('poke_owner'), 'broadcast', '{}'),
  ('e3000000-0000-4000-8000-000000000002', 'app:dm:someone', 'broadcast', '{"text": "private"}'),
  ('e3000000-0000-4000-8000-000000000003', 'tidesync:user:' || tests.get_supabase_uid('poke_stranger'), 'broadcast', '{}');
select tests.authenticate_as('poke_stranger');
select from set_config('realtime.topic', 'tidesync:user:' || tests.get_supabase_uid('poke_stranger'), true);
select results_eq($$ select id from realtime.messages where id::text like 'e3000000-%' $$,
  $$ values ('e3000000-0000-4000-8000-000000000003'::uuid) $$,
  'with realtime.topic() = their own user topic, a user sees that topic''s rows only: not another user''s pokes, not the app''s messages');
select from set_config('realtime.topic', '', true);
select tests.authenticate_as('poke_removed');
select ok(not pg_temp.can_join('tidesync:scope:e1000000-0000-4000-8000-000000000001'), 'a removed member may no longer join');
select ok(pg_temp.can_join('tidesync:user:' || tests.get_supabase_uid('poke_removed')), 'but still their user topic (where the removal was poked)');
select tests.authenticate_as_anon();
select ok(not pg_temp.can_join('tidesync:scope:e1000000-0000-4000-8000-000000000001'), 'anon may join nothing');
select tests.authenticate_as_service_role();
select ok(pg_temp.can_join('tidesync:scope:e1000000-0000-4000-8000-000000000001'), 'service_role (the server side) bypasses RLS');

-- ------------------------------------------------------------ what writes send
select tests.clear_authentication();
select is((select count(*)::integer from realtime.messages
            where topic = 'tidesync:user:' || tests.get_supabase_uid('poke_removed') and event = 'poke'),
  1, 'the removal poked the removed member''s user topic once (granted and removed in one transaction: one poke)');
-- (Pokes are sent once per topic and transaction, and this file is one transaction: start afresh.)
delete from realtime.messages;
select set_config('tidesync.pokes_sent', '', true);
select tests.authenticate_as('poke_editor');
insert into public.tasks (id, list_id, title) values
  ('e2000000-0000-4000-8000-000000000001', 'e1000000-0000-4000-8000-000000000001', 'a'),
  ('e2000000-0000-4000-8000-000000000002', 'e1000000-0000-4000-8000-000000000001', 'b');
update public.tasks set title = 'a2' where id = 'e2000000-0000-4000-8000-000000000001';
select tests.clear_authentication();
select results_eq($$ select topic, event, private, payload - 'id' from realtime.messages $$,
  $$ values ('tidesync:scope:e1000000-0000-4000-8000-000000000001', 'poke', true, '{}'::jsonb) $$,
  'two statements on one list in a transaction: one private poke on the list''s topic, with no data');
select ok((select (payload ->> 'id')::uuid is not null from realtime.messages), 'the poke carries only Realtime''s message id');

-- A move pokes both lists (the one it left and the one it entered).
delete from realtime.messages;
select set_config('tidesync.pokes_sent', '', true);
select tests.authenticate_as('poke_editor');
update public.tasks set list_id = tests.get_supabase_uid('poke_editor') where id = 'e2000000-0000-4000-8000-000000000002';
select tests.clear_authentication();
select results_eq($$ select topic from realtime.messages order by topic $$,
  array(select t from unnest(array['tidesync:scope:' || tests.get_supabase_uid('poke_editor'),
                                   'tidesync:scope:e1000000-0000-4000-8000-000000000001']) t order by t),
  'a task moved to another list pokes both lists');

-- ------------------------------------------------------------ nobody else sends
select tests.authenticate_as('poke_owner');
select throws_ok($$ insert into realtime.messages (topic, extension, event, payload, private)
                    values ('tidesync:scope:e1000000-0000-4000-8000-000000000001', 'broadcast', 'poke', '{}', true) $$,
  '42501', null, 'a member cannot send on a list''s topic (no insert policy): only the database pokes');

-- ------------------------------------------------------------ an app's own Broadcast policies
-- An app using Realtime Broadcast itself adds policies like those of Supabase's
-- Realtime Authorization guide; permissive policies OR together, so only the
-- restrictive guards keep tidesync's topics closed (rolled back with the file).
select tests.clear_authentication();
create policy "Authenticated users can receive broadcasts" on realtime.messages for select to authenticated using (true);
create policy "Authenticated users can send broadcasts" on realtime.messages for insert to authenticated with check (true);
create policy "Anyone can receive the lobby" on realtime.messages for select to anon using (true);
create policy "Authenticated users can edit broadcasts" on realtime.messages for update to authenticated using (true) with check (true);
insert into realtime.messages (id, topic, extension, event, payload, private) values
  ('e3000000-0000-4000-8000-000000000004', 'tidesync:user:' || tests.get_supabase_uid('poke_owner'), 'broadcast', 'poke', '{}', true);

select tests.authenticate_as('poke_stranger');
select ok(not pg_temp.can_join('tidesync:scope:e1000000-0000-4000-8000-000000000001')
      and not pg_temp.can_join('tidesync:user:' || tests.get_supabase_uid('poke_owner')),
  'with the app''s "select using (true)", a stranger still may not join a list''s topic nor another user''s');
select ok(pg_temp.can_join('room-1'), 'while the app''s own topics follow the app''s policy');
select throws_ok($$ insert into realtime.messages (topic, extension, event, payload, private)
                    values ('tidesync:scope:e1000000-0000-4000-8000-000000000001', 'broadcast', 'poke', '{}', true) $$,
  '42501', null, 'with the app''s "insert with check (true)", a stranger still cannot send on a list''s topic');
select from set_config('realtime.topic', 'tidesync:scope:e1000000-0000-4000-8000-000000000001', true);
select throws_ok($$ insert into realtime.messages (topic, extension, event, payload, private)
                    values ('room-1', 'broadcast', 'hello', '{}', true) $$,
  '42501', null, 'nor on a channel whose realtime.topic() is tidesync''s (a client broadcast on the channel)');
select from set_config('realtime.topic', 'room-1', true);
select lives_ok($$ insert into realtime.messages (topic, extension, event, payload, private)
                   values ('room-1', 'broadcast', 'hello', '{}', true) $$,
  'the app''s own topics take the app''s messages');
select throws_ok($$ update realtime.messages set topic = 'tidesync:scope:e1000000-0000-4000-8000-000000000001' where topic = 'room-1' $$,
  '42501', null, 'with the app''s "update using (true)", no message is moved onto a tidesync topic');
select tests.authenticate_as('poke_owner');
select from set_config('realtime.topic', 'tidesync:user:' || tests.get_supabase_uid('poke_owner'), true);
update realtime.messages set payload = '{"forged": true}'
 where topic = 'tidesync:user:' || tests.get_supabase_uid('poke_owner');
select is((select payload from realtime.messages where id = 'e3000000-0000-4000-8000-000000000004'), '{}'::jsonb,
  'nor is a poke rewritten, even on the user''s own topic');
select ok(pg_temp.can_join('tidesync:scope:e1000000-0000-4000-8000-000000000001')
      and pg_temp.can_join('tidesync:user:' || tests.get_supabase_uid('poke_owner')),
  'the owner still joins the list''s topic and their own');
select tests.authenticate_as_anon();
select ok(not pg_temp.can_join('tidesync:scope:e1000000-0000-4000-8000-000000000001') and pg_temp.can_join('room-1'),
  'anon, with an app policy of their own: the app''s topic, never tidesync''s (and no error)');

-- The pokes still go out: the trigger's owner bypasses RLS.
select tests.clear_authentication();
delete from realtime.messages;
select set_config('tidesync.pokes_sent', '', true);
select tests.authenticate_as('poke_editor');
insert into public.tasks (id, list_id, title) values
  ('e2000000-0000-4000-8000-000000000003', 'e1000000-0000-4000-8000-000000000001', 'c');
select tests.clear_authentication();
select results_eq($$ select topic, event from realtime.messages $$,
  $$ values ('tidesync:scope:e1000000-0000-4000-8000-000000000001', 'poke') $$,
  'a member''s write (as authenticated) still pokes the list''s topic with the app''s policies present');

select * from finish();
rollback;

-- A poke leaves the rest of the writer's transaction as it found it
-- (migration 20261127000100). realtime.send() does SET LOCAL realtime.topic
-- and never undoes it, so after a write to a synced table realtime.topic()
-- named tidesync's topic for the rest of the transaction: an app's own
-- Broadcast there (an insert into realtime.messages, or a read of its topic)
-- was refused or hidden by the guards of 20261126003400, and an app policy
-- comparing realtime.topic() saw tidesync's topic instead of its own.
begin;
select plan(5);

select from tests.create_supabase_user('leave_writer');
-- An app using Broadcast itself, with policies like Supabase's guide shows
-- (rolled back with the file).
create policy "Authenticated users can receive broadcasts" on realtime.messages for select to authenticated using (true);
create policy "Authenticated users can send broadcasts" on realtime.messages for insert to authenticated with check (true);

select tests.authenticate_as('leave_writer');
insert into public.lists (id, title) values ('e4000000-0000-4000-8000-000000000001', 'Poked');
select is((select count(*)::integer from realtime.messages where topic = 'tidesync:scope:e4000000-0000-4000-8000-000000000001'),
  0, 'outside a channel the poke stays hidden, even from its writer (a member reads it only with realtime.topic() = its topic)');
select is(realtime.topic(), null, 'after a write that poked, realtime.topic() is as it was before (unset)');
select lives_ok($$ insert into realtime.messages (topic, extension, event, payload, private)
                   values ('room-1', 'broadcast', 'hello', '{"text": "hi"}', true) $$,
  'the app''s own broadcast later in the same transaction is taken');
select is((select count(*)::integer from realtime.messages where topic = 'room-1'), 1,
  'and the app reads its own topic''s message');

-- An app that set its topic itself (its own realtime.send) keeps it across a poke.
select from set_config('realtime.topic', 'room-2', true);
insert into public.lists (id, title) values ('e4000000-0000-4000-8000-000000000002', 'Poked too');
select is(realtime.topic(), 'room-2', 'a poke leaves realtime.topic() set to the app''s own topic');

select * from finish();
rollback;

-- Members whose membership rows were there before their table was registered
-- (an existing app adopting tidesync: enable_sync_membership, then enable_sync
-- of its tables) write their own rows as any member does. Before migration
-- 20261128006700 enable_sync_membership gave those rows no access entry
-- (app_private.sync_access: only a membership inserted afterwards wrote one),
-- so refuse_hidden_record_id and refuse_hidden_scope_history took their
-- scopes for hidden: the member's supabase-js upsert of an item they see, and
-- its delete and create again, answered 23505 (tidesync_test_board_items_pkey), as did the
-- upsert of their board (tidesync_test_boards_pkey). enable_sync_membership now writes the
-- access entries of the rows already there, as their insert would have
-- (app_private.grant_sync_access_to_members, the same write as
-- track_sync_access's), and the migration writes the missing ones of the
-- membership tables registered before it. enable_sync recorded a synced
-- table's existing rows already (sync_records, sync_changes).
begin;
select plan(13);

select from tests.create_supabase_user('em_alice');
select from tests.create_supabase_user('em_bob');

-- An app's tables with rows, before tidesync (docs/security-model.md, step 4: boards, here under a test-only name).
create table public.tidesync_test_boards (id uuid primary key default gen_random_uuid(), title text not null);
create table public.tidesync_test_board_members (
  id uuid primary key,
  board_id uuid not null references public.tidesync_test_boards (id) on delete cascade,
  user_id uuid not null references auth.users (id) on delete cascade,
  unique (board_id, user_id)
);
create table public.tidesync_test_board_items (
  id uuid primary key,
  board_id uuid not null references public.tidesync_test_boards (id) on delete cascade,
  title text not null
);
insert into public.tidesync_test_boards (id, title) values ('e6000000-0000-4000-8000-000000000001', 'B');
insert into public.tidesync_test_board_members (id, board_id, user_id) values
  ('e6000000-0000-4000-8000-0000000000c1', 'e6000000-0000-4000-8000-000000000001', tests.get_supabase_uid('em_alice'));
insert into public.tidesync_test_board_items (id, board_id, title) values
  ('e6000000-0000-4000-8000-0000000000a1', 'e6000000-0000-4000-8000-000000000001', 'item');
alter table public.tidesync_test_boards enable row level security;
alter table public.tidesync_test_board_members enable row level security;
alter table public.tidesync_test_board_items enable row level security;
grant select, insert (id, title), update (id, title) on public.tidesync_test_boards to authenticated;
grant select on public.tidesync_test_board_members to authenticated;
grant select, insert (id, board_id, title), update (id, board_id, title), delete on public.tidesync_test_board_items to authenticated;
create policy "Members read and rename their tidesync_test_boards" on public.tidesync_test_boards for all to authenticated
  using (id in (select m.board_id from public.tidesync_test_board_members m where m.user_id = auth.uid()))
  with check (id in (select m.board_id from public.tidesync_test_board_members m where m.user_id = auth.uid()));
create policy "Members read their memberships" on public.tidesync_test_board_members for select to authenticated
  using (user_id = auth.uid());
create policy "Members write their tidesync_test_boards' items" on public.tidesync_test_board_items for all to authenticated
  using (board_id in (select m.board_id from public.tidesync_test_board_members m where m.user_id = auth.uid()))
  with check (board_id in (select m.board_id from public.tidesync_test_board_members m where m.user_id = auth.uid()));
select app_private.enable_sync_membership('public.tidesync_test_board_members', 'board_id', 'user_id');
select app_private.enable_sync('public.tidesync_test_boards', 'id');
select app_private.enable_sync('public.tidesync_test_board_items', 'board_id');

select results_eq($$ select user_id, scope_id, granted from app_private.sync_access where scope_id = 'e6000000-0000-4000-8000-000000000001' $$,
  $$ values (tests.get_supabase_uid('em_alice'), 'e6000000-0000-4000-8000-000000000001'::uuid, true) $$,
  'enable_sync_membership grants access to the users of the memberships already there');
select results_eq($$ select collection, id from app_private.sync_records where scope_id = 'e6000000-0000-4000-8000-000000000001' order by collection $$,
  $$ values ('tidesync_test_board_items', 'e6000000-0000-4000-8000-0000000000a1'::uuid), ('tidesync_test_boards', 'e6000000-0000-4000-8000-000000000001'::uuid) $$,
  'enable_sync records the rows already there (as it did before)');

-- What each write answers (SQLSTATE | constraint), or 'written'.
create temporary table answers (label text primary key, answer text not null);
grant insert, select on answers to authenticated;
create function pg_temp.answer(p_label text, p_sql text) returns void
language plpgsql as $f$
declare
  v_state text; v_constraint text;
begin
  execute p_sql;
  insert into pg_temp.answers values (p_label, 'written');
exception when others then
  get stacked diagnostics v_state = returned_sqlstate, v_constraint = constraint_name;
  insert into pg_temp.answers values (p_label, concat_ws(' | ', v_state, v_constraint));
end
$f$;

select tests.authenticate_as('em_alice');
select results_eq($$ select title from public.tidesync_test_board_items $$, array['item'], 'Alice sees her board''s item');
select pg_temp.answer('item upsert', $$ insert into public.tidesync_test_board_items (id, board_id, title)
  values ('e6000000-0000-4000-8000-0000000000a1', 'e6000000-0000-4000-8000-000000000001', 'upserted')
  on conflict (id) do update set id = excluded.id, board_id = excluded.board_id, title = excluded.title $$);
select pg_temp.answer('item delete', $$ delete from public.tidesync_test_board_items where id = 'e6000000-0000-4000-8000-0000000000a1' $$);
select pg_temp.answer('item created again', $$ insert into public.tidesync_test_board_items (id, board_id, title)
  values ('e6000000-0000-4000-8000-0000000000a1', 'e6000000-0000-4000-8000-000000000001', 'again') $$);
select pg_temp.answer('board upsert', $$ insert into public.tidesync_test_boards (id, title) values ('e6000000-0000-4000-8000-000000000001', 'B2')
  on conflict (id) do update set id = excluded.id, title = excluded.title $$);
select is((select answer from answers where label = 'item upsert'), 'written', 'Alice upserts the item (supabase-js upsert)');
select is((select answer from answers where label = 'item delete'), 'written', 'Alice deletes it');
select is((select answer from answers where label = 'item created again'), 'written',
  'and creates its id again (its tombstone is in her board)');
select is((select answer from answers where label = 'board upsert'), 'written', 'Alice upserts her board');
select results_eq($$ select b.title, i.title from public.tidesync_test_boards b join public.tidesync_test_board_items i on i.board_id = b.id $$,
  $$ values ('B2', 'again') $$, 'her writes are there');

-- A membership inserted afterwards is granted by the trigger, as before.
select tests.clear_authentication();
insert into public.tidesync_test_board_members (id, board_id, user_id) values
  ('e6000000-0000-4000-8000-0000000000c2', 'e6000000-0000-4000-8000-000000000001', tests.get_supabase_uid('em_bob'));
select ok((select granted from app_private.sync_access where user_id = tests.get_supabase_uid('em_bob') and scope_id = 'e6000000-0000-4000-8000-000000000001'),
  'a membership inserted later grants access, as before');

-- ------------------------------------------------------------ what the migration runs for tables registered before it
-- A list membership missing its access entry (as one made before list_members was registered) gets it;
-- memberships with a granted entry are left as they are.
select from tests.create_supabase_user('em_carol');
select from set_config('tests.carol_seq', (select seq::text from app_private.sync_access
  where user_id = tests.get_supabase_uid('em_carol') and scope_id = tests.get_supabase_uid('em_carol')), true);
delete from app_private.sync_access where user_id = tests.get_supabase_uid('em_alice');
select app_private.grant_sync_access_to_members('public.list_members');
select results_eq($$ select scope_id, granted from app_private.sync_access where user_id = tests.get_supabase_uid('em_alice') $$,
  $$ values (tests.get_supabase_uid('em_alice'), true) $$,
  'grant_sync_access_to_members writes the access entry a membership lacks (Alice''s personal list)');
select is((select seq from app_private.sync_access where user_id = tests.get_supabase_uid('em_carol') and scope_id = tests.get_supabase_uid('em_carol')),
  current_setting('tests.carol_seq')::bigint, 'and leaves a granted one as it is');
select is(tests.function_callers('app_private.grant_sync_access(uuid[], uuid[])'), '{}'::text[], 'no API role grants access');
select is(tests.function_callers('app_private.grant_sync_access_to_members(regclass)'), '{}'::text[], 'nor calls the backfill');

select * from finish();
rollback;

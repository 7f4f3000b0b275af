-- The live-records usage (app_private.sync_usage, the quota) follows
-- enable_sync and disable_sync (migration 20261126002300):
--   - rows a table holds when it is made syncable get a creator from its
--     created_by column (uuid; a value naming no user: none) and count in
--     that creator's usage, so a later delete of one takes it out again;
--   - a table without a created_by column: its rows have no creator, the
--     usage does not move;
--   - disable_sync takes the table's live rows out of their creators' usage
--     (tombstones and other tables' rows stay counted as they were); a second
--     enable_sync counts them again.
begin;
select plan(12);

select from tests.create_supabase_user('usage_alice');
select from tests.create_supabase_user('usage_bob');

create function pg_temp.usage_of(p_user text) returns integer language sql as $$
  select coalesce((select u.live_records from app_private.sync_usage u where u.user_id = tests.get_supabase_uid(p_user)), 0)
$$;

-- Alice has usage already (a list of hers, written as her): the baseline.
select from set_config('request.jwt.claims', json_build_object('sub', tests.get_supabase_uid('usage_alice'), 'role', 'authenticated')::text, true);
insert into public.lists (id, title) values ('c5000000-0000-4000-8000-000000000001', 'Alice''s');
select from set_config('request.jwt.claims', '', true);
create temporary table baseline as
  select pg_temp.usage_of('usage_alice') as alice, pg_temp.usage_of('usage_bob') as bob;
select ok((select alice from baseline) >= 1, 'Alice counts a live row before the app table is synced');

-- An app table with rows before it is made syncable. created_by has no
-- foreign key here, so that a value naming no user can be tried too.
create table public.tidesync_test_usage_notes (
  id uuid primary key default gen_random_uuid(),
  list_id uuid not null references public.lists (id) on delete cascade,
  body text not null default '',
  created_by uuid default auth.uid()
);
alter table public.tidesync_test_usage_notes enable row level security;
insert into public.tidesync_test_usage_notes (id, list_id, created_by) values
  ('c5000000-0000-4000-8000-0000000000a1', 'c5000000-0000-4000-8000-000000000001', tests.get_supabase_uid('usage_alice')),
  ('c5000000-0000-4000-8000-0000000000a2', 'c5000000-0000-4000-8000-000000000001', tests.get_supabase_uid('usage_alice')),
  ('c5000000-0000-4000-8000-0000000000b1', 'c5000000-0000-4000-8000-000000000001', tests.get_supabase_uid('usage_bob')),
  ('c5000000-0000-4000-8000-0000000000c1', 'c5000000-0000-4000-8000-000000000001', null),
  ('c5000000-0000-4000-8000-0000000000c2', 'c5000000-0000-4000-8000-000000000001', 'c5000000-0000-4000-8000-00000000dead');

create table public.tidesync_test_usage_plain (
  id uuid primary key default gen_random_uuid(),
  list_id uuid not null references public.lists (id) on delete cascade
);
alter table public.tidesync_test_usage_plain enable row level security;
insert into public.tidesync_test_usage_plain (id, list_id) values ('c5000000-0000-4000-8000-0000000000d1', 'c5000000-0000-4000-8000-000000000001');

-- ------------------------------------------------------------ enable_sync: existing rows get their creator
select app_private.enable_sync('public.tidesync_test_usage_notes', 'list_id');
select results_eq(
  $$ select id, created_by from app_private.sync_records where collection = 'tidesync_test_usage_notes' order by id $$,
  $$ values ('c5000000-0000-4000-8000-0000000000a1'::uuid, tests.get_supabase_uid('usage_alice')),
            ('c5000000-0000-4000-8000-0000000000a2', tests.get_supabase_uid('usage_alice')),
            ('c5000000-0000-4000-8000-0000000000b1', tests.get_supabase_uid('usage_bob')),
            ('c5000000-0000-4000-8000-0000000000c1', null),
            ('c5000000-0000-4000-8000-0000000000c2', null) $$,
  'enable_sync records each existing row with the creator its created_by column names (none when that is no user)');
select is(pg_temp.usage_of('usage_alice') - (select alice from baseline), 2, 'Alice''s two existing rows count in her usage');
select is(pg_temp.usage_of('usage_bob') - (select bob from baseline), 1, 'Bob''s one counts in his');

delete from public.tidesync_test_usage_notes where id = 'c5000000-0000-4000-8000-0000000000a1';
select is(pg_temp.usage_of('usage_alice') - (select alice from baseline), 1, 'deleting one of them takes it out of her usage');

select from set_config('request.jwt.claims', json_build_object('sub', tests.get_supabase_uid('usage_alice'), 'role', 'authenticated')::text, true);
insert into public.tidesync_test_usage_notes (id, list_id) values ('c5000000-0000-4000-8000-0000000000a3', 'c5000000-0000-4000-8000-000000000001');
delete from public.tidesync_test_usage_notes where id = 'c5000000-0000-4000-8000-0000000000b1';  -- Bob's row, deleted by Alice: his count
select from set_config('request.jwt.claims', '', true);
select is(array[pg_temp.usage_of('usage_alice') - (select alice from baseline), pg_temp.usage_of('usage_bob') - (select bob from baseline)],
  array[2, 0], 'a row written after enable_sync counts for its writer; a delete for the row''s creator');

select app_private.enable_sync('public.tidesync_test_usage_plain', 'list_id');
select is((select created_by from app_private.sync_records where collection = 'tidesync_test_usage_plain'), null::uuid,
  'a table without a created_by column: its existing rows have no creator');
select is(pg_temp.usage_of('usage_alice') - (select alice from baseline), 2, 'and count for nobody');

-- ------------------------------------------------------------ disable_sync: its live rows leave the usage
select app_private.disable_sync('public.tidesync_test_usage_notes');
select is(array[pg_temp.usage_of('usage_alice'), pg_temp.usage_of('usage_bob')], array[(select alice from baseline), (select bob from baseline)],
  'disable_sync takes the table''s live rows out of their creators'' usage (her list still counts; the tombstones did already)');
select is_empty($$ select 1 from app_private.sync_records where collection = 'tidesync_test_usage_notes' $$, 'and deletes its sync state');

select app_private.enable_sync('public.tidesync_test_usage_notes', 'list_id');
select is(pg_temp.usage_of('usage_alice') - (select alice from baseline), 2, 'enabled again, the rows count again (no double count)');
select app_private.disable_sync('public.tidesync_test_usage_plain');
select app_private.disable_sync('public.tidesync_test_usage_notes');
select is(array[pg_temp.usage_of('usage_alice'), pg_temp.usage_of('usage_bob')], array[(select alice from baseline), (select bob from baseline)],
  'disabled again: back to the baseline');

select * from finish();
rollback;

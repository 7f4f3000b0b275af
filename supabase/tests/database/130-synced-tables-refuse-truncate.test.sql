-- TRUNCATE of a synced or membership table is refused (migration
-- 20261127000900): no delete trigger sees it, so devices would keep the rows
-- and the usage would never drop. DELETE is the way.
--   - the sample's lists, tasks and list_members refuse it, truncated with
--     `cascade` so that an app's foreign key to one of them (a task_links,
--     docs/security-model.md step 3) is not what refuses it: without it
--     Postgres refuses first, 0A000 "cannot truncate a table referenced in a
--     foreign key constraint". The refusal names the table named first (its
--     trigger fires first).
--   - enable_sync and enable_sync_membership install the refusal on a new
--     table, disable_sync takes it away.
begin;
select plan(9);

select throws_ok($$ truncate public.tasks cascade $$, '0A000',
  'use DELETE: TRUNCATE bypasses sync tracking (public.tasks is synced)', 'truncate of a synced table is refused');
select throws_ok($$ truncate public.lists cascade $$, '0A000', null, 'truncate of a scope table with cascade is refused');
select throws_ok($$ truncate public.list_members cascade $$, '0A000',
  'use DELETE: TRUNCATE bypasses sync tracking (public.list_members is synced)', 'truncate of a membership table is refused');

create table public.tidesync_test_truncated_notes (
  id uuid primary key default gen_random_uuid(),
  list_id uuid not null references public.lists (id) on delete cascade
);
alter table public.tidesync_test_truncated_notes enable row level security;
create table public.tidesync_test_truncated_members (
  list_id uuid not null references public.lists (id) on delete cascade,
  user_id uuid not null,
  primary key (list_id, user_id)
);

select app_private.enable_sync('public.tidesync_test_truncated_notes', 'list_id');
select app_private.enable_sync_membership('public.tidesync_test_truncated_members', 'list_id', 'user_id');
select throws_ok($$ truncate public.tidesync_test_truncated_notes $$, '0A000', null, 'enable_sync installs the refusal');
select throws_ok($$ truncate public.tidesync_test_truncated_members $$, '0A000', null, 'enable_sync_membership installs the refusal');

select app_private.disable_sync('public.tidesync_test_truncated_notes');
select app_private.disable_sync('public.tidesync_test_truncated_members');
select lives_ok($$ truncate public.tidesync_test_truncated_notes $$, 'disable_sync takes the refusal away (a synced table)');
select lives_ok($$ truncate public.tidesync_test_truncated_members $$, 'disable_sync takes the refusal away (a membership table)');

select is((select count(*)::int from pg_catalog.pg_trigger where tgname = 'tidesync_refuse_truncate'),
  (select count(*)::int from (select relation from app_private.sync_tables union select relation from app_private.sync_memberships) r),
  'every synced and membership table, and only those, refuses truncate');
select lives_ok($$ delete from public.tasks where false $$, 'delete still works');

select * from finish();
rollback;

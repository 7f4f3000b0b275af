-- A scope table (enable_sync(…, 'id')) needs a membership table registered by
-- enable_sync_membership, its scope column a foreign key to the scope table's
-- id on delete cascade, restrict or no action (migration 20261128001900): the
-- engine records a lost scope only when a membership row is deleted, so a
-- scope table without one had its deleted rows stay on devices. Checked when
-- the transaction commits (deferred constraint triggers), so the sample's
-- order, the scope table first and its membership table after it, works.
-- Here `set constraints all immediate` runs the check that commit would run.
begin;
select plan(9);

select is(tests.function_callers('app_private.scope_tables_without_membership()'), '{}'::text[], 'scope_tables_without_membership: no API role');
select is(tests.function_callers('app_private.refuse_scope_table_without_membership()'), '{}'::text[], 'refuse_scope_table_without_membership (trigger): no API role');
select results_eq($$ select tgrelid::regclass::text, tgdeferrable and tginitdeferred from pg_catalog.pg_trigger
                     where tgname = 'tidesync_scope_tables_have_members' order by 1 $$,
  $$ values ('app_private.sync_memberships', true), ('app_private.sync_tables', true) $$,
  'the check is deferred to commit, on both registries');
select is_empty($$ select app_private.scope_tables_without_membership() $$, 'the sample: public.lists has public.list_members');

-- ------------------------------------------------------------ the sample's order: scope table first
create table public.tidesync_test_tap_boards (id uuid primary key);
alter table public.tidesync_test_tap_boards enable row level security;
select app_private.enable_sync('public.tidesync_test_tap_boards', 'id');
select throws_ok($$ set constraints all immediate $$, '22023', 'enable_sync: the scope table public.tidesync_test_tap_boards has no membership table',
  'a scope table without a membership table is refused at commit');
create table public.tidesync_test_tap_board_members (board_id uuid primary key references public.tidesync_test_tap_boards (id) on delete cascade, user_id uuid not null);
alter table public.tidesync_test_tap_board_members enable row level security;
select app_private.enable_sync_membership('public.tidesync_test_tap_board_members', 'board_id', 'user_id');
select lives_ok($$ set constraints all immediate; set constraints all deferred $$,
  'with its membership table registered after it in the same transaction (the sample''s order), it commits');

-- ------------------------------------------------------------ which membership tables count
create table public.tidesync_test_tap_nofk (id uuid primary key);
create table public.tidesync_test_tap_nofk_members (scope_id uuid not null, user_id uuid not null);
create table public.tidesync_test_tap_setnull (id uuid primary key);
create table public.tidesync_test_tap_setnull_members (scope_id uuid references public.tidesync_test_tap_setnull (id) on delete set null, user_id uuid not null);
create table public.tidesync_test_tap_restrict (id uuid primary key);
create table public.tidesync_test_tap_restrict_members (scope_id uuid not null references public.tidesync_test_tap_restrict (id) on delete restrict, user_id uuid not null);
alter table public.tidesync_test_tap_nofk enable row level security;
alter table public.tidesync_test_tap_setnull enable row level security;
alter table public.tidesync_test_tap_restrict enable row level security;
select app_private.enable_sync_membership(m, 'scope_id', 'user_id')
  from unnest(array['public.tidesync_test_tap_nofk_members', 'public.tidesync_test_tap_setnull_members', 'public.tidesync_test_tap_restrict_members']::regclass[]) m;
select app_private.enable_sync(t, 'id') from unnest(array['public.tidesync_test_tap_nofk', 'public.tidesync_test_tap_setnull', 'public.tidesync_test_tap_restrict']::regclass[]) t;
select results_eq($$ select s from app_private.scope_tables_without_membership() s $$,
  $$ values ('public.tidesync_test_tap_nofk'::regclass), ('public.tidesync_test_tap_setnull'::regclass) $$,
  'a membership table without a foreign key to the scope, or one that sets null on delete (no loss written), does not count; restrict does');
select app_private.disable_sync(t) from unnest(array['public.tidesync_test_tap_nofk', 'public.tidesync_test_tap_nofk_members', 'public.tidesync_test_tap_setnull', 'public.tidesync_test_tap_setnull_members']::regclass[]) t;

-- ------------------------------------------------------------ unregistering the membership table
select app_private.disable_sync('public.tidesync_test_tap_board_members');
select throws_ok($$ set constraints all immediate $$, '22023', 'enable_sync: the scope table public.tidesync_test_tap_boards has no membership table',
  'disable_sync of the membership table of a scope table still synced is refused at commit');
select app_private.disable_sync('public.tidesync_test_tap_boards');
select lives_ok($$ set constraints all immediate; set constraints all deferred $$, 'both unregistered: it commits');

select * from finish();
rollback;

-- app_private.enable_sync indexes the scope column when no index starts with
-- it, and disable_sync drops only the index enable_sync made (migration
-- 20261126002310):
--   - a table without one gets `<table>_<column>_idx` on the scope column,
--     marked by its comment; disabled and enabled again, the same name;
--   - a table whose own index starts with the scope column (here a two-column
--     one) gets none, and keeps its own after disable_sync;
--   - a partial index on the scope column does not count;
--   - a scope table (scope column id) has its primary key, and gets none.
begin;
select plan(10);

create function pg_temp.indexes_of(p_table regclass) returns text[] language sql as $$
  select coalesce(array_agg(c.relname::text order by c.relname), '{}')
    from pg_catalog.pg_index i join pg_catalog.pg_class c on c.oid = i.indexrelid
   where i.indrelid = p_table
$$;

create table public.tidesync_test_scoped_plain (
  id uuid primary key default gen_random_uuid(),
  list_id uuid not null references public.lists (id) on delete cascade
);
alter table public.tidesync_test_scoped_plain enable row level security;

create table public.tidesync_test_scoped_own (
  id uuid primary key default gen_random_uuid(),
  list_id uuid not null references public.lists (id) on delete cascade,
  position double precision not null default 0
);
create index tidesync_test_scoped_own_by_list on public.tidesync_test_scoped_own (list_id, position);
alter table public.tidesync_test_scoped_own enable row level security;

create table public.tidesync_test_scoped_partial (
  id uuid primary key default gen_random_uuid(),
  list_id uuid not null references public.lists (id) on delete cascade,
  done boolean not null default false
);
create index tidesync_test_scoped_partial_open on public.tidesync_test_scoped_partial (list_id) where not done;
alter table public.tidesync_test_scoped_partial enable row level security;

create table public.tidesync_test_scoped_boards (id uuid primary key default gen_random_uuid());
alter table public.tidesync_test_scoped_boards enable row level security;

-- ------------------------------------------------------------ no index yet: enable_sync makes one
select app_private.enable_sync('public.tidesync_test_scoped_plain', 'list_id');
select is(pg_temp.indexes_of('public.tidesync_test_scoped_plain'), array['tidesync_test_scoped_plain_list_id_idx', 'tidesync_test_scoped_plain_pkey'],
  'enable_sync indexes the scope column of a table without such an index, named <table>_<column>_idx');
select is((select array_agg(a.attname::text order by k.n) from pg_catalog.pg_index i
             cross join lateral unnest(i.indkey) with ordinality k(attnum, n)
             join pg_catalog.pg_attribute a on a.attrelid = i.indrelid and a.attnum = k.attnum
            where i.indexrelid = 'public.tidesync_test_scoped_plain_list_id_idx'::regclass),
  array['list_id'], 'on the scope column alone');
select ok(obj_description('public.tidesync_test_scoped_plain_list_id_idx'::regclass, 'pg_class') like 'Created by app\_private.enable\_sync%',
  'its comment says enable_sync made it');
select app_private.disable_sync('public.tidesync_test_scoped_plain');
select is(pg_temp.indexes_of('public.tidesync_test_scoped_plain'), array['tidesync_test_scoped_plain_pkey'], 'disable_sync drops the index it made');
select app_private.enable_sync('public.tidesync_test_scoped_plain', 'list_id');
select is(pg_temp.indexes_of('public.tidesync_test_scoped_plain'), array['tidesync_test_scoped_plain_list_id_idx', 'tidesync_test_scoped_plain_pkey'],
  'enabled again: the same index, the same name');

-- ------------------------------------------------------------ the developer's own index
select app_private.enable_sync('public.tidesync_test_scoped_own', 'list_id');
select is(pg_temp.indexes_of('public.tidesync_test_scoped_own'), array['tidesync_test_scoped_own_by_list', 'tidesync_test_scoped_own_pkey'],
  'a table with its own index starting with the scope column gets none');
select app_private.disable_sync('public.tidesync_test_scoped_own');
select is(pg_temp.indexes_of('public.tidesync_test_scoped_own'), array['tidesync_test_scoped_own_by_list', 'tidesync_test_scoped_own_pkey'],
  'and disable_sync leaves the developer''s index alone');

-- ------------------------------------------------------------ a partial index does not count
select app_private.enable_sync('public.tidesync_test_scoped_partial', 'list_id');
select is(pg_temp.indexes_of('public.tidesync_test_scoped_partial'), array['tidesync_test_scoped_partial_list_id_idx', 'tidesync_test_scoped_partial_open', 'tidesync_test_scoped_partial_pkey'],
  'a partial index on the scope column does not serve every row: enable_sync adds one');

-- ------------------------------------------------------------ a scope table
select app_private.enable_sync('public.tidesync_test_scoped_boards', 'id');
select is(pg_temp.indexes_of('public.tidesync_test_scoped_boards'), array['tidesync_test_scoped_boards_pkey'], 'a scope table: its primary key serves, no index added');
select app_private.disable_sync('public.tidesync_test_scoped_boards');
select is(pg_temp.indexes_of('public.tidesync_test_scoped_boards'), array['tidesync_test_scoped_boards_pkey'], 'and disable_sync keeps the primary key');

select * from finish();
rollback;

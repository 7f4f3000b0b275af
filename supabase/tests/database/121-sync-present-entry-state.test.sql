-- The invariant a full-sync pull reads versions by (functions/api/sync/pull-store.ts):
-- a PRESENT change entry carries its row's current version (seq) and
-- updated_at (changed_at), whatever wrote the row — insert, update of a
-- field, a move to another list, a no-op update, a delete and a re-insert
-- with the same id — so the pull lists present rows without a lookup of
-- sync_records. A deleted row has no present entry.
begin;
select plan(7);

select from tests.create_supabase_user('present_owner');
select tests.authenticate_as('present_owner');
insert into public.lists (id, title) values
  ('c3000000-0000-4000-8000-000000000001', 'One'),
  ('c3000000-0000-4000-8000-000000000002', 'Two');
insert into public.tasks (id, list_id, title) values
  ('c3000000-0000-4000-8000-0000000000a1', 'c3000000-0000-4000-8000-000000000001', 'a'),
  ('c3000000-0000-4000-8000-0000000000a2', 'c3000000-0000-4000-8000-000000000001', 'b'),
  ('c3000000-0000-4000-8000-0000000000a3', 'c3000000-0000-4000-8000-000000000001', 'c');
select tests.clear_authentication();

-- Every present entry of the rows above against their sync state; the query is reused after each write.
create function pg_temp.mismatches() returns bigint language sql as $$
  select count(*)
    from app_private.sync_changes c
    left join app_private.sync_records s on s.collection = c.collection and s.id = c.id
   where c.present and c.id::text like 'c3000000-%'
     and (s.id is null or s.deleted or c.seq <> s.version or c.changed_at <> s.updated_at)
$$;

select is(pg_temp.mismatches(), 0::bigint, 'after inserts: every present entry has its row''s version and updated_at');

select tests.authenticate_as('present_owner');
update public.tasks set title = 'a2' where id = 'c3000000-0000-4000-8000-0000000000a1';
select tests.clear_authentication();
select is(pg_temp.mismatches(), 0::bigint, 'after a field update');

select tests.authenticate_as('present_owner');
update public.tasks set list_id = 'c3000000-0000-4000-8000-000000000002' where id = 'c3000000-0000-4000-8000-0000000000a2';
select tests.clear_authentication();
select is(pg_temp.mismatches(), 0::bigint, 'after a move to another list (the entry in the new list is the present one)');

select tests.authenticate_as('present_owner');
update public.tasks set title = title where id = 'c3000000-0000-4000-8000-0000000000a3';
update public.lists set title = 'One again' where id = 'c3000000-0000-4000-8000-000000000001';
select tests.clear_authentication();
select is(pg_temp.mismatches(), 0::bigint, 'after a no-op update of a task and an update of a list');

select tests.authenticate_as('present_owner');
delete from public.tasks where id = 'c3000000-0000-4000-8000-0000000000a3';
select tests.clear_authentication();
select is(pg_temp.mismatches(), 0::bigint, 'after a delete');
select is((select count(*) from app_private.sync_changes where id = 'c3000000-0000-4000-8000-0000000000a3' and present), 0::bigint,
  'a deleted row has no present entry');

select tests.authenticate_as('present_owner');
insert into public.tasks (id, list_id, title) values ('c3000000-0000-4000-8000-0000000000a3', 'c3000000-0000-4000-8000-000000000002', 'c again');
select tests.clear_authentication();
select is(pg_temp.mismatches(), 0::bigint, 'after re-inserting a deleted id in another list');

select * from finish();
rollback;

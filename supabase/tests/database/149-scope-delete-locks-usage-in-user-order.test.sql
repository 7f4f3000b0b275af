-- A scope row's delete locks, with its creator's usage row, those of the creators of the
-- rows its cascade deletes (migration 20261128003800_scope_delete_locks_cascaded_usage):
-- the scope table's sync trigger runs before the cascade's statements' (queued behind it),
-- and locks them all at once, in user_id order (lock_sync_usage), reading the cascaded
-- rows' creators from the bookkeeping, where they are live still. The order itself needs
-- two sessions: tests/integration/usage-lock-order.test.ts.
begin;
select plan(6);

select from tests.create_supabase_user('scope_del_alice');
select from tests.create_supabase_user('scope_del_carol');

create temporary table ids as select
  tests.get_supabase_uid('scope_del_alice') as alice, tests.get_supabase_uid('scope_del_carol') as carol,
  'c9490000-0000-4000-8000-00000000000a'::uuid as list, 'c9490000-0000-4000-8000-00000000000b'::uuid as own_list;
grant select on ids to authenticated;

create function pg_temp.usage(p uuid) returns integer language sql as $$
  select coalesce((select live_records from app_private.sync_usage where user_id = p), 0)
$$;
-- A row locked or changed since it was written has an xmax (nothing else runs here).
create function pg_temp.usage_locked(p uuid) returns boolean language sql as $$
  select xmax::text <> '0' from app_private.sync_usage where user_id = p
$$;

-- Alice's list, Carol an editor, with two tasks of hers in it (one statement: her usage
-- row is written once, not locked since).
select tests.authenticate_as('scope_del_alice');
insert into public.lists (id, title) select list, 'Alice''s' from ids union all select own_list, 'her own' from ids;
insert into public.tasks (list_id, title) select own_list, 'alice''s' from ids;
select tests.clear_authentication();
insert into public.list_members (list_id, user_id, role) select list, carol, 'editor' from ids;
select tests.authenticate_as('scope_del_carol');
insert into public.tasks (list_id, title) select list, 'carol''s ' || g from ids, generate_series(1, 2) g;
select tests.clear_authentication();
select ok(not pg_temp.usage_locked((select carol from ids)), 'Carol''s usage row: written, not locked since');

-- Whether Carol's usage row is locked when the sync trigger of the cascade's delete of the
-- tasks starts (a probe sorting before it, reading as the superuser; rolled back with the test).
create temporary table seen (carol_locked boolean);
grant insert on seen to authenticated;
create function pg_temp.probe() returns trigger language plpgsql security definer as $$
begin
  insert into seen select pg_temp.usage_locked((select carol from ids));
  return null;
end;
$$;
create trigger a_probe after delete on public.tasks for each statement execute function pg_temp.probe();

select lives_ok($$ select tests.authenticate_as('scope_del_alice'); delete from public.lists where id = (select list from ids) $$,
  'Alice deletes her list holding Carol''s tasks');
select tests.clear_authentication();
select is((select array_agg(carol_locked) from seen), array[true],
  'Carol''s usage row is locked by the list''s own sync trigger, before the cascade''s changes it');
select is(array[pg_temp.usage((select alice from ids)), pg_temp.usage((select carol from ids))], array[2, 0],
  'the list left Alice''s usage (her other list and its task stay), the tasks Carol''s');

-- A list holding only its creator's rows: nothing more to lock (one user), all counted.
select lives_ok($$ select tests.authenticate_as('scope_del_alice'); delete from public.lists where id = (select own_list from ids) $$,
  'Alice deletes her list holding her own task');
select tests.clear_authentication();
select is(pg_temp.usage((select alice from ids)), 0, 'the list and its task left her usage');

select * from finish();
rollback;

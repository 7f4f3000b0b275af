-- A row with no live sync state (written with the triggers off, as a restore with
-- session_replication_role = replica does) gets, at its first update with them on, the sync
-- state its insert by that writer would have: the whole-record stamp, the writer as creator,
-- counted in the writer's usage under the quota (migration 20261128008500). Before, the
-- update wrote a live change entry alone (every pull listed the row; reads and pushes
-- answered NOT_FOUND). The API's side: tests/integration/rows-loaded-with-triggers-off.test.ts.
begin;
select plan(7);

select from tests.create_supabase_user('loaded_alice');
create temporary table ids as select
  tests.get_supabase_uid('loaded_alice') as alice,
  'c1500000-0000-4000-8000-00000000000a'::uuid as loaded, 'c1500000-0000-4000-8000-00000000000b'::uuid as reloaded,
  'c1500000-0000-4000-8000-00000000000c'::uuid as over;
grant select on ids to authenticated;

create function pg_temp.usage(p uuid) returns integer language sql as $$
  select coalesce((select live_records from app_private.sync_usage where user_id = p), 0)
$$;
create function pg_temp.state(p uuid) returns jsonb language sql as $$
  select jsonb_build_object('deleted', s.deleted, 'created_by', s.created_by, 'stamped', s.field_versions ? '*' and s.field_versions - '*' = '{}',
                            'entry', (select c.present and c.seq = s.version from app_private.sync_changes c where c.collection = 'tasks' and c.id = p))
    from app_private.sync_records s where s.collection = 'tasks' and s.id = p
$$;

-- A task deleted with the triggers on (a tombstone), then both loaded with them off.
select tests.authenticate_as('loaded_alice');
insert into public.tasks (id, list_id, title) select reloaded, alice, 'first life' from ids;
delete from public.tasks where id = (select reloaded from ids);
select tests.clear_authentication();
set local session_replication_role = replica;
insert into public.tasks (id, list_id, title, created_by)
  select loaded, alice, 'loaded', alice from ids union all select reloaded, alice, 'loaded again', alice from ids;
set local session_replication_role = origin;
select is(pg_temp.state((select loaded from ids)), null, 'a row loaded with the triggers off has no sync state');

select tests.authenticate_as('loaded_alice');
create temporary table before as select pg_temp.usage((select alice from ids)) as n;
update public.tasks set done = true where id in ((select loaded from ids), (select reloaded from ids));
select tests.clear_authentication();
select is(pg_temp.state((select loaded from ids)),
  jsonb_build_object('deleted', false, 'created_by', (select alice from ids), 'stamped', true, 'entry', true),
  'its first update gives it what its insert would have: live, its writer''s, the whole-record stamp, its entry at its version');
select is(pg_temp.state((select reloaded from ids)),
  jsonb_build_object('deleted', false, 'created_by', (select alice from ids), 'stamped', true, 'entry', true),
  'so does a row whose tombstone was left by a delete with the triggers on');
select is(pg_temp.usage((select alice from ids)), (select n from before) + 2, 'both count for the writer');

-- A second update is an ordinary one: its column stamped, the creator kept.
select tests.authenticate_as('loaded_alice');
update public.tasks set title = 'edited' where id = (select loaded from ids);
select tests.clear_authentication();
select ok((select s.field_versions ? 'title' and s.field_versions ? '*' from app_private.sync_records s
            where s.collection = 'tasks' and s.id = (select loaded from ids)),
  'then its updates stamp the columns they change');
select is(pg_temp.usage((select alice from ids)), (select n from before) + 2, 'and count nothing more');

-- At the quota, the update is refused as the insert would be.
create or replace function app_private.max_live_records_per_user() returns integer
language sql immutable parallel safe set search_path = '' as $$ select (select n from pg_temp.before) + 2 $$;
set local session_replication_role = replica;
insert into public.tasks (id, list_id, title, created_by) select over, alice, 'over', alice from ids;
set local session_replication_role = origin;
select tests.authenticate_as('loaded_alice');
select throws_ok($$ update public.tasks set done = true where id = (select over from ids) $$, '23514', null,
  'at the quota, the update that would give it sync state is refused (23514)');
select tests.clear_authentication();

select * from finish();
rollback;

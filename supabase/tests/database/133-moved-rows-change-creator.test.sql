-- A row a user moves into a scope its creator is no member of becomes the
-- mover's (migration 20261128001550_moved_rows_count_for_their_mover): its
-- sync_records.created_by and one live record of usage go from the creator to
-- the mover, so the creator is never charged for rows they cannot reach; the
-- mover's usage grows as by a create (23514 at the quota).
begin;
select plan(14);

select from tests.create_supabase_user('move_alice');
select from tests.create_supabase_user('move_bob');
select from tests.create_supabase_user('move_carol');

create temporary table ids as select
  tests.get_supabase_uid('move_alice') as alice, tests.get_supabase_uid('move_bob') as bob,
  tests.get_supabase_uid('move_carol') as carol, 'c8000000-0000-4000-8000-00000000000a'::uuid as shared;
grant select on ids to authenticated, service_role;

-- Usage against a recount of sync_records: the invariant the triggers keep.
create function pg_temp.usage_drift() returns bigint language sql as $$
  select count(*) from (
    select u.user_id from app_private.sync_usage u
     where u.user_id in (select alice from ids union all select bob from ids union all select carol from ids)
       and u.live_records <> (select count(*) from app_private.sync_records s where s.created_by = u.user_id and not s.deleted)) d
$$;
create function pg_temp.usage(p uuid) returns integer language sql as $$
  select live_records from app_private.sync_usage where user_id = p
$$;

-- Alice's list, Bob and Carol editors; Alice writes 3 tasks into it.
select tests.authenticate_as('move_alice');
insert into public.lists (id, title) values ((select shared from ids), 'shared');
select tests.clear_authentication();
insert into public.list_members (list_id, user_id, role)
select shared, bob, 'editor' from ids union all select shared, carol, 'editor' from ids;
select tests.authenticate_as('move_alice');
insert into public.tasks (id, list_id, title)
select ('c8000000-0000-4000-8000-00000000000' || g)::uuid, (select shared from ids), 'alice ' || g from generate_series(1, 3) g;
select tests.clear_authentication();
select is(pg_temp.usage((select alice from ids)), 4, 'Alice''s usage: her list and 3 tasks');

-- ------------------------------------------------------------ a move out of the creator's reach
select tests.authenticate_as('move_bob');
select lives_ok($$ update public.tasks set list_id = (select bob from ids) where list_id = (select shared from ids) $$,
  'Bob moves Alice''s tasks into his personal list (the Data API''s update)');
select tests.clear_authentication();
select is(pg_temp.usage((select alice from ids)), 1, 'they leave Alice''s usage');
select is(pg_temp.usage((select bob from ids)), 3, 'and count for Bob, who holds them');
select is((select array_agg(distinct s.created_by) from app_private.sync_records s where s.collection = 'tasks' and s.scope_id = (select bob from ids)),
  array[(select bob from ids)], 'their sync state names Bob as their creator');
select is((select array_agg(distinct t.created_by) from public.tasks t where t.list_id = (select bob from ids)),
  array[(select alice from ids)], 'the table''s own created_by column is the app''s, untouched');
select is(pg_temp.usage_drift(), 0::bigint, 'usage equals a recount of sync_records');

-- ------------------------------------------------------------ moves that keep the creator
-- Bob back into the shared list: Alice is a member there, the rows stay Bob's (he moved them out of her reach).
select tests.authenticate_as('move_bob');
update public.tasks set list_id = (select shared from ids) where list_id = (select bob from ids);
select tests.clear_authentication();
select is(pg_temp.usage((select bob from ids)), 3, 'a move into a list the creator is a member of keeps the creator');
-- The service role moving them into Carol's personal list: no mover to charge, the creator stays.
select tests.authenticate_as_service_role();
update public.tasks set list_id = (select carol from ids) where list_id = (select shared from ids);
select tests.clear_authentication();
select ok(pg_temp.usage((select bob from ids)) = 3 and coalesce(pg_temp.usage((select carol from ids)), 0) = 0,
  'a move by the service role (no uid) keeps the creator');
select tests.authenticate_as_service_role();
update public.tasks set list_id = (select shared from ids) where list_id = (select carol from ids);
select tests.clear_authentication();

-- ------------------------------------------------------------ the mover's quota
-- Carol one below the quota: moving Bob's 3 tasks into her personal list would take her over it.
insert into app_private.sync_usage (user_id, live_records)
select carol, app_private.max_live_records_per_user() - 1 from ids
on conflict (user_id) do update set live_records = excluded.live_records;
select tests.authenticate_as('move_carol');
select throws_ok($$ update public.tasks set list_id = (select carol from ids) where list_id = (select shared from ids) $$,
  '23514', 'at most 100000 live records per user; delete some first',
  'a move that would take the mover over the quota is refused like a create (23514)');
select lives_ok($$ update public.tasks set list_id = (select carol from ids) where id = 'c8000000-0000-4000-8000-000000000001' $$,
  'one move up to the quota is allowed');
select tests.clear_authentication();
select is(pg_temp.usage((select carol from ids)), app_private.max_live_records_per_user(), 'it counts for Carol');
select is(pg_temp.usage((select bob from ids)), 2, 'and no longer for Bob');
update app_private.sync_usage set live_records = 1 where user_id = (select carol from ids);
select is(pg_temp.usage_drift(), 0::bigint, 'usage equals a recount of sync_records after every move');

select * from finish();
rollback;

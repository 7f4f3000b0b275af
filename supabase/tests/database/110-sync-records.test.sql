-- Sync storage (app_private.sync_heads, records, sync_ops): RLS and exact
-- policy names, grants, per-role behaviour (owner, another user, anon,
-- service_role), cascade from auth.users, and the invariants the database
-- enforces even if the api function had a bug.
begin;
select plan(62);

do $$ begin
  perform tests.create_supabase_user('sync_alice');
  perform tests.create_supabase_user('sync_bob');
end $$;

-- ------------------------------------------------------------ structure
select ok((select relrowsecurity from pg_class where oid = 'app_private.sync_heads'::regclass), 'RLS is enabled on app_private.sync_heads');
select ok((select relrowsecurity from pg_class where oid = 'app_private.records'::regclass), 'RLS is enabled on app_private.records');
select ok((select relrowsecurity from pg_class where oid = 'app_private.sync_ops'::regclass), 'RLS is enabled on app_private.sync_ops');

select policies_are('app_private', 'sync_heads', array[
  'Users can read their own sync head',
  'Users can create their own sync head',
  'Users can advance their own sync head'
], 'sync_heads has exactly its three policies');
select policies_are('app_private', 'records', array[
  'Users can read their own sync records',
  'Users can create their own sync records',
  'Users can update their own sync records'
], 'records has exactly its three policies');
select policies_are('app_private', 'sync_ops', array[
  'Users can read their own sync ops',
  'Users can record their own sync ops'
], 'sync_ops has exactly its two policies (no update, no delete)');

select table_privs_are('app_private', 'sync_heads', 'authenticated', array['SELECT', 'INSERT', 'UPDATE'], 'authenticated may read, create and advance heads');
select table_privs_are('app_private', 'records', 'authenticated', array['SELECT', 'INSERT', 'UPDATE'], 'authenticated may read, insert and update records (no delete)');
select table_privs_are('app_private', 'sync_ops', 'authenticated', array['SELECT', 'INSERT'], 'authenticated may read and insert ops (no update, no delete)');
select table_privs_are('app_private', 'sync_heads', 'anon', '{}'::text[], 'anon has no privilege on sync_heads');
select table_privs_are('app_private', 'records', 'anon', '{}'::text[], 'anon has no privilege on records');
select table_privs_are('app_private', 'sync_ops', 'anon', '{}'::text[], 'anon has no privilege on sync_ops');
select table_privs_are('app_private', 'records', 'service_role', '{}'::text[], 'service_role has no privilege on records');
select ok(not has_function_privilege('authenticated', 'app_private.records_check_write()', 'execute')
      and not has_function_privilege('anon', 'app_private.sync_heads_check_update()', 'execute'),
  'the API roles cannot call the trigger functions');

-- --------------------------------------------------------- the owner (alice)
select tests.authenticate_as('sync_alice');
select lives_ok($$
  insert into app_private.sync_heads (user_id, last_seq, live_records) values ((select auth.uid()), 3, 1);
  insert into app_private.records (user_id, collection, id, version, change_seq, data, field_versions)
  values ((select auth.uid()), 'tasks', 'a0000000-0000-4000-8000-000000000001', 2, 2, '{"title": "alice task"}', '{"title": {"v": 2, "d": null}}');
  insert into app_private.records (user_id, collection, id, version, change_seq, data, field_versions, deleted, deleted_at)
  values ((select auth.uid()), 'tasks', 'a0000000-0000-4000-8000-000000000002', 3, 3, null, '{"*": {"v": 3, "d": null}}', true, now());
  insert into app_private.sync_ops (user_id, op_id, collection, record_id, type, status, result, version)
  values ((select auth.uid()), 'a0000000-0000-4000-8000-0000000000f1', 'tasks', 'a0000000-0000-4000-8000-000000000001', 'upsert', 'applied', '{"status": "applied"}', 2);
$$, 'the owner can create their head, records and op results');
select results_eq($$ select count(*)::int from app_private.records $$, array[2], 'the owner reads their records');
select results_eq($$ select count(*)::int from app_private.sync_ops $$, array[1], 'the owner reads their op results');
select lives_ok($$
  update app_private.sync_heads set last_seq = 4 where user_id = (select auth.uid());
  update app_private.records set version = 4, change_seq = 4, data = '{"title": "edited"}'
   where id = 'a0000000-0000-4000-8000-000000000001';
$$, 'the owner can advance their head and update their record');
select throws_ok($$ delete from app_private.records $$, '42501', null, 'not even the owner can delete records (tombstones only)');
select throws_ok($$ update app_private.sync_ops set status = 'rejected' $$, '42501', null, 'not even the owner can change a recorded op');
select throws_ok($$ delete from app_private.sync_ops $$, '42501', null, 'not even the owner can delete recorded ops');

-- ------------------------------------------------------- another user (bob)
select tests.authenticate_as('sync_bob');
select is_empty($$ select 1 from app_private.records $$, 'another user sees none of alice''s records');
select is_empty($$ select 1 from app_private.sync_ops $$, 'another user sees none of alice''s op results');
select is_empty($$ select 1 from app_private.sync_heads $$, 'another user sees none of alice''s heads');
select is_empty($$ select 1 from app_private.records where id = 'a0000000-0000-4000-8000-000000000001' $$, 'alice''s record id looks unknown to bob');

select results_eq($$ with u as (update app_private.records set data = '{"title": "pwned"}', version = version + 10, change_seq = change_seq + 10
                                 where user_id = tests.get_supabase_uid('sync_alice') returning 1) select count(*)::int from u $$,
  array[0], 'another user cannot update alice''s records');
select results_eq($$ with u as (update app_private.sync_heads set last_seq = last_seq + 1
                                 where user_id = tests.get_supabase_uid('sync_alice') returning 1) select count(*)::int from u $$,
  array[0], 'another user cannot advance alice''s head');
-- For records the BEFORE trigger refuses first (23514): bob cannot even see
-- alice's head to allocate a version from; the policy would refuse next.
select throws_ok($$ insert into app_private.records (user_id, collection, id, version, change_seq, data)
                    values (tests.get_supabase_uid('sync_alice'), 'tasks', gen_random_uuid(), 9, 9, '{}') $$,
  '23514', null, 'another user cannot insert a record for alice');
select throws_ok($$ insert into app_private.sync_ops (user_id, op_id, collection, record_id, type, status, result)
                    values (tests.get_supabase_uid('sync_alice'), gen_random_uuid(), 'tasks', gen_random_uuid(), 'upsert', 'rejected', '{}') $$,
  '42501', null, 'another user cannot record an op for alice');
select throws_ok($$ insert into app_private.sync_heads (user_id) values (tests.get_supabase_uid('sync_alice')) $$,
  '42501', null, 'another user cannot create a head for alice');
select throws_ok($$ insert into app_private.sync_heads as h (user_id) values (tests.get_supabase_uid('sync_alice'))
                    on conflict (user_id) do update set last_seq = h.last_seq + 1 $$,
  '42501', null, 'another user cannot lock or advance alice''s head through an upsert');
select throws_ok($$ insert into app_private.records (user_id, collection, id, version, change_seq, data)
                    values (tests.get_supabase_uid('sync_alice'), 'tasks', 'a0000000-0000-4000-8000-000000000001', 9, 9, '{}')
                    on conflict (user_id, collection, id) do update set data = excluded.data $$,
  '23514', null, 'another user cannot overwrite alice''s record through an upsert');
select throws_ok($$ delete from app_private.records where user_id = tests.get_supabase_uid('sync_alice') $$, '42501', null, 'another user cannot delete alice''s records');
select throws_ok($$ delete from app_private.sync_ops $$, '42501', null, 'another user cannot delete op results');
select throws_ok($$ delete from app_private.sync_heads $$, '42501', null, 'another user cannot delete heads');
select lives_ok($$
  insert into app_private.sync_heads (user_id, last_seq, live_records) values ((select auth.uid()), 1, 1);
  insert into app_private.records (user_id, collection, id, version, change_seq, data)
  values ((select auth.uid()), 'tasks', 'a0000000-0000-4000-8000-000000000001', 1, 1, '{"title": "bob''s own"}');
$$, 'bob can use the same record id for his own record');
-- Refused twice over: the owner trigger (23514) fires before the policy's WITH CHECK would.
select throws_ok($$ update app_private.records set user_id = tests.get_supabase_uid('sync_alice') where user_id = (select auth.uid()) $$,
  '23514', null, 'a user cannot hand their record to another user');
select throws_ok($$ update app_private.sync_heads set user_id = tests.get_supabase_uid('sync_alice') $$,
  '23514', null, 'a user cannot hand their head to another user');

-- --------------------------------------------------------------- anon
select tests.authenticate_as_anon();
select throws_ok($$ select 1 from app_private.records $$, '42501', null, 'anon cannot read records');
select throws_ok($$ select 1 from app_private.sync_ops $$, '42501', null, 'anon cannot read op results');
select throws_ok($$ select 1 from app_private.sync_heads $$, '42501', null, 'anon cannot read heads');
select throws_ok($$ insert into app_private.records (user_id, collection, id, version, change_seq, data)
                    values (gen_random_uuid(), 'tasks', gen_random_uuid(), 1, 1, '{}') $$, '42501', null, 'anon cannot insert records');
select throws_ok($$ insert into app_private.sync_ops (user_id, op_id, collection, record_id, type, status, result)
                    values (gen_random_uuid(), gen_random_uuid(), 'tasks', gen_random_uuid(), 'upsert', 'rejected', '{}') $$, '42501', null, 'anon cannot insert op results');
select throws_ok($$ update app_private.sync_heads set last_seq = 0 $$, '42501', null, 'anon cannot update heads');

-- ----------------------------------------------------------- invariants
select tests.authenticate_as('sync_alice');
select throws_ok($$ update app_private.records set version = 1, change_seq = 1 where id = 'a0000000-0000-4000-8000-000000000001' $$,
  '23514', null, 'a record''s version cannot decrease');
select throws_ok($$ update app_private.records set data = data where id = 'a0000000-0000-4000-8000-000000000001' $$,
  '23514', null, 'a record cannot be rewritten without a new version');
select throws_ok($$ update app_private.records set version = 99, change_seq = 99 where id = 'a0000000-0000-4000-8000-000000000001' $$,
  '23514', null, 'a version the head has not handed out is refused');
select throws_ok($$ update app_private.sync_heads set last_seq = 1 $$, '23514', null, 'a head''s last_seq never moves backwards');
select lives_ok($$ update app_private.sync_heads set last_seq = 20 $$, 'the owner allocates more seqs');
select throws_ok($$ update app_private.records set version = 5, change_seq = 5, data = jsonb_build_object('notes', repeat('x', 70000))
                    where id = 'a0000000-0000-4000-8000-000000000001' $$, '23514', null, 'data over 64 KiB is refused');
select throws_ok($$ update app_private.records set version = 6, change_seq = 7 where id = 'a0000000-0000-4000-8000-000000000001' $$,
  '23514', null, 'change_seq must equal version');
select throws_ok($$ update app_private.records set version = 8, change_seq = 8, deleted = true, deleted_at = now()
                    where id = 'a0000000-0000-4000-8000-000000000001' $$, '23514', null, 'a deleted record has no data');
select throws_ok($$ update app_private.records set version = 9, change_seq = 9, data = null
                    where id = 'a0000000-0000-4000-8000-000000000001' $$, '23514', null, 'a live record has data');
select throws_ok($$ update app_private.records set version = 10, change_seq = 10, collection = 'lists'
                    where id = 'a0000000-0000-4000-8000-000000000001' $$, '23514', null, 'a record keeps its collection');
select throws_ok($$ insert into app_private.records (user_id, collection, id, version, change_seq, data)
                    values ((select auth.uid()), 'Bad Name', gen_random_uuid(), 11, 11, '{}') $$, '23514', null, 'collection names are checked');
select throws_ok($$ insert into app_private.sync_ops (user_id, op_id, collection, record_id, type, status, result)
                    values ((select auth.uid()), gen_random_uuid(), 'tasks', gen_random_uuid(), 'upsert', 'applied', '{}') $$,
  '23514', null, 'an applied op records its resulting version');

select tests.clear_authentication();
select throws_ok($$ update app_private.records set user_id = tests.get_supabase_uid('sync_bob'), version = 12, change_seq = 12
                    where user_id = tests.get_supabase_uid('sync_alice') and id = 'a0000000-0000-4000-8000-000000000002' $$,
  '23514', null, 'even a role that bypasses RLS cannot move a record to another owner');

-- ----------------------------------------------------------- cascade
create temporary table gone_user on commit drop as select tests.get_supabase_uid('sync_alice') as id;
select isnt_empty($$ select 1 from app_private.records r join gone_user g on g.id = r.user_id $$, 'alice has records before her account is deleted');
delete from auth.users where id = (select id from gone_user);
select is_empty($$ select 1 from app_private.records r join gone_user g on g.id = r.user_id $$, 'deleting the auth user removes their records');
select is_empty($$ select 1 from app_private.sync_ops o join gone_user g on g.id = o.user_id $$, 'deleting the auth user removes their op results');
select is_empty($$ select 1 from app_private.sync_heads h join gone_user g on g.id = h.user_id $$, 'deleting the auth user removes their head');
select results_eq($$ select count(*)::int from app_private.records where user_id = tests.get_supabase_uid('sync_bob') $$, array[1], 'other users'' records stay');

select * from finish();
rollback;

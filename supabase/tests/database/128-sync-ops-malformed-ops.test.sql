-- The op ledger records an op rejected for its shape (migration
-- 20261127000600_ledger_keeps_malformed_ops): POST /v1/sync/batch rejects such
-- an op on its own, exactly once, and it may name no record (a record_id that
-- is not a uuid) or no type. Only a rejected op may lack them.
begin;
select plan(4);

select from tests.create_supabase_user('ledger_alice');
select tests.authenticate_as('ledger_alice');

select lives_ok($$
  insert into app_private.sync_ops (user_id, op_id, collection, record_id, type, status, error)
  values ((select auth.uid()), gen_random_uuid(), null, null, null, 'rejected',
          '{"code": "VALIDATION_FAILED", "message": "1 field is invalid"}')
$$, 'a rejected op without a record or type is recorded');
select throws_ok($$
  insert into app_private.sync_ops (user_id, op_id, collection, record_id, type, status)
  values ((select auth.uid()), gen_random_uuid(), 'tasks', null, 'upsert', 'applied')
$$, '23514', null, 'an applied op names its record');
select throws_ok($$
  insert into app_private.sync_ops (user_id, op_id, collection, record_id, type, status)
  values ((select auth.uid()), gen_random_uuid(), 'tasks', gen_random_uuid(), null, 'conflict')
$$, '23514', null, 'a conflicting op names its type');
select is((select count(*)::int from app_private.sync_ops where record_id is null), 1, 'the rejected op is in the caller''s ledger');

select * from finish();
rollback;

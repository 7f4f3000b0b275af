-- app_private.release_webhook_reads (20261126001400_release_webhook_reads.sql):
-- the webhook-ids of the release manager's signed reads. Only the service role
-- reaches it; an id is taken once (what makes a replayed read a 401); ids are
-- forgotten by the service role, never changed.
begin;
select plan(8);

select policies_are('app_private', 'release_webhook_reads', array[
  'Release managers can read their read ids',
  'Release managers can record read ids',
  'Release managers can forget expired read ids'
]);
select table_privs_are('app_private', 'release_webhook_reads', 'anon', array[]::text[], 'anon has no privilege on read ids');
select table_privs_are('app_private', 'release_webhook_reads', 'authenticated', array[]::text[], 'authenticated has no privilege on read ids');
select table_privs_are('app_private', 'release_webhook_reads', 'service_role', array['DELETE', 'INSERT', 'SELECT'],
  'the service role records, reads and forgets read ids, never changes one');

select tests.authenticate_as_service_role();
select results_eq(
  $$ insert into app_private.release_webhook_reads (webhook_id, signed_at) values ('msg_403', now())
     on conflict (webhook_id) do nothing returning webhook_id $$,
  $$ values ('msg_403'::text) $$,
  'the first read with an id takes it');
select is_empty(
  $$ insert into app_private.release_webhook_reads (webhook_id, signed_at) values ('msg_403', now())
     on conflict (webhook_id) do nothing returning webhook_id $$,
  'a second read with the same id takes nothing (a replay)');
select throws_ok(
  $$ insert into app_private.release_webhook_reads (webhook_id, signed_at) values ('', now()) $$,
  '23514', null, 'an empty id is refused');
select tests.clear_authentication();

select from tests.create_supabase_user('reads_user');
select tests.authenticate_as('reads_user');
select throws_ok($$ select * from app_private.release_webhook_reads $$, '42501', null, 'a user cannot read the release manager''s read ids');
select tests.clear_authentication();

select * from finish();
rollback;

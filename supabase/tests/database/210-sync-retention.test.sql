-- Sync retention (app_private.purge_sync_retention): it removes only ledger
-- rows, tombstones, entries of deleted or moved rows and revocations older
-- than the window, p_batch at a time, repeating each table's batches until
-- one deletes fewer than p_batch or p_time_budget is spent (a zero budget:
-- one batch per table), never waits for a writer (SKIP LOCKED), raises sync_horizon.purged_txid to the highest txid
-- it purged (never lowers it), purges no entry at or above the oldest open
-- transaction (so the horizon stays below every pull's bound), purges expired rate-limit counters, and only
-- service_role (and pg_cron as the owner) may run it. Times are relative to
-- a fixed p_now = 2030-01-01; with the default 30 days the cutoff is 2029-12-02.
begin;
select plan(44);

select from tests.create_supabase_user('retention_alice');
select from tests.create_supabase_user('retention_bob');

-- ------------------------------------------------------------ the function
select is((select prosecdef from pg_proc where oid = 'app_private.purge_sync_retention(timestamptz, integer, integer, interval)'::regprocedure), true,
  'the purge is security definer (it deletes rows no API role may delete)');
select is((select proconfig from pg_proc where oid = 'app_private.purge_sync_retention(timestamptz, integer, integer, interval)'::regprocedure), array['search_path=""'],
  'the purge pins an empty search_path');
-- Each of the six purges (two of them for list invites: expired unused, and
-- used before the cutoff, migration 20261128003700) picks its victims with
-- FOR UPDATE SKIP LOCKED (the end of this file shows it for tombstones, with
-- a second session).
select is((select array_length(regexp_split_to_array(lower(prosrc), 'for update skip locked'), 1) - 1
             from pg_proc where oid = 'app_private.purge_sync_retention(timestamptz, integer, integer, interval)'::regprocedure),
  6, 'every purge step skips rows a writer holds (FOR UPDATE SKIP LOCKED), so the job never waits for a push');
select has_index('app_private', 'sync_records', 'sync_records_tombstones_idx', 'tombstones are indexed by age');
select has_index('app_private', 'sync_changes', 'sync_changes_departed_idx', 'entries of deleted or moved rows are indexed by age');
select has_index('app_private', 'sync_access', 'sync_access_revoked_idx', 'revocations are indexed by age');
select has_index('app_private', 'sync_ops', 'sync_ops_created_at_idx', 'ledger rows are indexed by age');

-- ------------------------------------------------------------ fixtures
-- Only this file's rows are purgeable: the sample data's are set aside.
-- Their txids are below 400, which every cluster's initdb has used: below
-- the oldest open transaction, as the purge needs (the section "it stays
-- below the oldest open transaction").
delete from app_private.sync_ops;
delete from app_private.sync_records where deleted;
delete from app_private.sync_changes where not present;
delete from app_private.sync_access where not granted;
delete from app_private.rate_limit_counters;
update app_private.sync_horizon set purged_txid = '1';

insert into app_private.sync_changes (scope_id, collection, id, present, seq, txid, since_seq, changed_at) values
  (tests.get_supabase_uid('retention_alice'), 'tasks', 'c1000000-0000-4000-8000-000000000001', false, 1, '10', 1, '2029-11-12'),  -- 50 days
  (tests.get_supabase_uid('retention_alice'), 'tasks', 'c1000000-0000-4000-8000-000000000002', false, 2, '30', 2, '2029-11-22'),  -- 40 days
  (tests.get_supabase_uid('retention_alice'), 'tasks', 'c1000000-0000-4000-8000-000000000003', false, 3, '40', 3, '2029-12-22'),  -- 10 days
  (tests.get_supabase_uid('retention_alice'), 'tasks', 'c1000000-0000-4000-8000-000000000004', true, 4, '5', 4, '2029-10-01');   -- present: kept
insert into app_private.sync_access (user_id, scope_id, granted, seq, txid, changed_at) values
  (tests.get_supabase_uid('retention_bob'), 'c2000000-0000-4000-8000-000000000001', false, 5, '20', '2029-11-17'),  -- 45 days
  (tests.get_supabase_uid('retention_bob'), 'c2000000-0000-4000-8000-000000000002', true, 6, '6', '2029-10-01'),    -- a grant: kept
  (tests.get_supabase_uid('retention_bob'), 'c2000000-0000-4000-8000-000000000003', false, 7, '41', '2029-12-27');  -- 5 days
insert into app_private.sync_records (collection, id, scope_id, version, deleted, created_at, updated_at, deleted_at) values
  ('tasks', 'c3000000-0000-4000-8000-000000000001', tests.get_supabase_uid('retention_alice'), 1, true, '2029-10-01', '2029-11-12', '2029-11-12'),
  ('tasks', 'c3000000-0000-4000-8000-000000000002', tests.get_supabase_uid('retention_alice'), 2, true, '2029-10-01', '2029-11-22', '2029-11-22'),
  ('tasks', 'c3000000-0000-4000-8000-000000000003', tests.get_supabase_uid('retention_alice'), 3, true, '2029-10-01', '2029-12-22', '2029-12-22'),
  ('tasks', 'c3000000-0000-4000-8000-000000000004', tests.get_supabase_uid('retention_alice'), 4, false, '2029-10-01', '2029-10-01', null);  -- live: kept
insert into app_private.sync_ops (user_id, op_id, record_id, collection, type, status, version, error, created_at) values
  (tests.get_supabase_uid('retention_alice'), 'c4000000-0000-4000-8000-000000000001', 'c3000000-0000-4000-8000-000000000001', 'tasks', 'delete', 'applied', 1, null, '2029-11-17'),
  (tests.get_supabase_uid('retention_alice'), 'c4000000-0000-4000-8000-000000000002', 'c3000000-0000-4000-8000-000000000002', 'tasks', 'upsert', 'rejected', null, '{"code": "VALIDATION_FAILED"}', '2029-11-22'),
  (tests.get_supabase_uid('retention_alice'), 'c4000000-0000-4000-8000-000000000003', 'c3000000-0000-4000-8000-000000000004', 'tasks', 'upsert', 'applied', 4, null, '2029-12-27');
insert into app_private.rate_limit_counters (user_id, operation, window_start, hits) values
  (tests.get_supabase_uid('retention_alice'), 'sync.pull', '2029-12-25', 3),
  (tests.get_supabase_uid('retention_alice'), 'sync.pull', '2029-12-31 23:59', 1);

-- ------------------------------------------------------------ the API roles cannot run it
select tests.authenticate_as('retention_alice');
select throws_ok($$ select * from app_private.purge_sync_retention('2030-01-01', 1, p_time_budget => '0') $$, '42501', null, 'a signed-in user cannot run the purge');
select tests.authenticate_as_anon();
select throws_ok($$ select * from app_private.purge_sync_retention('2030-01-01', 1, p_time_budget => '0') $$, '42501', null, 'anon cannot run the purge');
select tests.clear_authentication();
select results_eq($$ select count(*)::int from app_private.sync_changes where id::text like 'c1000000-0000-4000-8000-%' $$, array[4], 'the refused calls purged nothing');

-- ------------------------------------------------------------ bounded batches
select tests.authenticate_as_service_role();
select results_eq($$ select ops_purged, tombstones_purged, changes_purged, rate_limit_counters_purged from app_private.purge_sync_retention('2030-01-01', 1, p_time_budget => '0') $$,
  $$ values (1, 1, 1, 1) $$, 'first run (p_batch 1): at most one of each, the oldest');
select tests.clear_authentication();
select results_eq($$ select id::text from app_private.sync_changes where id::text like 'c1000000-0000-4000-8000-%' order by id $$,
  $$ values ('c1000000-0000-4000-8000-000000000002'), ('c1000000-0000-4000-8000-000000000003'), ('c1000000-0000-4000-8000-000000000004') $$,
  'the oldest entry of a deleted row (50 days) is gone');
select results_eq($$ select scope_id::text from app_private.sync_access where user_id = tests.get_supabase_uid('retention_bob') and scope_id::text like 'c2000000-0000-4000-8000-%' order by scope_id $$,
  $$ values ('c2000000-0000-4000-8000-000000000002'), ('c2000000-0000-4000-8000-000000000003') $$,
  'the old revocation (45 days) is gone; the grant stays');
select is((select purged_txid from app_private.sync_horizon), '20'::xid8,
  'the horizon rose to the highest purged txid (the revocation''s 20 over the entry''s 10)');

select tests.authenticate_as_service_role();
select results_eq($$ select ops_purged, tombstones_purged, changes_purged, rate_limit_counters_purged from app_private.purge_sync_retention('2030-01-01', 1, p_time_budget => '0') $$,
  $$ values (1, 1, 1, 0) $$, 'second run: the rest of the expired rows');
select tests.clear_authentication();
select is((select purged_txid from app_private.sync_horizon), '30'::xid8, 'the horizon follows (30)');
select tests.authenticate_as_service_role();
select results_eq($$ select ops_purged, tombstones_purged, changes_purged, rate_limit_counters_purged from app_private.purge_sync_retention('2030-01-01', 1, p_time_budget => '0') $$,
  $$ values (0, 0, 0, 0) $$, 'third run: nothing left to purge');
select tests.clear_authentication();
select is((select purged_txid from app_private.sync_horizon), '30'::xid8, 'a run that purges nothing leaves the horizon alone');

select results_eq($$ select id::text, deleted from app_private.sync_records where id::text like 'c3000000-0000-4000-8000-%' order by id $$,
  $$ values ('c3000000-0000-4000-8000-000000000003', true), ('c3000000-0000-4000-8000-000000000004', false) $$,
  'live rows (however old) and tombstones inside the window stay');
select results_eq($$ select op_id::text from app_private.sync_ops $$, array['c4000000-0000-4000-8000-000000000003'], 'ledger rows inside the window stay');
select results_eq($$ select id::text, present from app_private.sync_changes where id::text like 'c1000000-0000-4000-8000-%' order by id $$,
  $$ values ('c1000000-0000-4000-8000-000000000003', false), ('c1000000-0000-4000-8000-000000000004', true) $$,
  'present entries (however old) and recent entries of deleted rows stay');
select results_eq($$ select window_start from app_private.rate_limit_counters where user_id = tests.get_supabase_uid('retention_alice') $$,
  $$ values ('2029-12-31 23:59'::timestamptz) $$, 'only the expired rate-limit counter was purged');

-- ------------------------------------------------------------ the window, the horizon and the arguments
select tests.authenticate_as_service_role();
select results_eq($$ select ops_purged, tombstones_purged, changes_purged from app_private.purge_sync_retention('2030-01-01', 5000, 4) $$,
  $$ values (1, 1, 1) $$, 'a shorter p_retention_days purges younger rows (the 10- and 5-day ones)');
select tests.clear_authentication();
select is((select purged_txid from app_private.sync_horizon), '41'::xid8, 'the horizon rose to the 5-day revocation''s txid');
update app_private.sync_horizon set purged_txid = '100';
insert into app_private.sync_changes (scope_id, collection, id, present, seq, txid, since_seq, changed_at)
values (tests.get_supabase_uid('retention_alice'), 'tasks', 'c1000000-0000-4000-8000-000000000005', false, 8, '50', 8, '2029-11-01');
select tests.authenticate_as_service_role();
select results_eq($$ select changes_purged from app_private.purge_sync_retention('2030-01-01') $$, array[1], 'an entry with a lower txid is purged');
select tests.clear_authentication();
select is((select purged_txid from app_private.sync_horizon), '100'::xid8, 'the horizon never moves back');
select tests.authenticate_as_service_role();
select results_eq($$ select ops_purged, tombstones_purged, changes_purged from app_private.purge_sync_retention('2029-01-01') $$,
  $$ values (0, 0, 0) $$, 'an earlier p_now purges nothing');
select throws_ok($$ select * from app_private.purge_sync_retention('2030-01-01', 0) $$, '22023', null, 'p_batch must be positive');
select throws_ok($$ select * from app_private.purge_sync_retention('2030-01-01', 10, 0) $$, '22023', null, 'p_retention_days must be positive');
select throws_ok($$ select * from app_private.purge_sync_retention(null) $$, '22023', null, 'p_now is required');
select throws_ok($$ select * from app_private.purge_sync_retention('2030-01-01', 10, 30, '-1 second') $$, '22023', null, 'p_time_budget must not be negative');

-- ------------------------------------------------------------ one run clears a backlog of many batches
-- Three batches' worth (p_batch 10) of each kind: one run removes them all, and
-- the horizon rises to the highest txid of any batch (the newest revocation's,
-- in the last batch). Before, a run removed one batch of each.
select tests.clear_authentication();
insert into app_private.sync_changes (scope_id, collection, id, present, seq, txid, since_seq, changed_at)
select tests.get_supabase_uid('retention_alice'), 'tasks', gen_random_uuid(), false, 100 + g, (200 + g)::text::xid8, 100 + g, '2029-10-01'::timestamptz + make_interval(mins => g)
  from generate_series(1, 30) g;
insert into app_private.sync_access (user_id, scope_id, granted, seq, txid, changed_at)
select tests.get_supabase_uid('retention_bob'), gen_random_uuid(), false, 200 + g, (300 + g)::text::xid8, '2029-10-01'::timestamptz + make_interval(mins => g)
  from generate_series(1, 30) g;
insert into app_private.sync_records (collection, id, scope_id, version, deleted, created_at, updated_at, deleted_at)
select 'tasks', gen_random_uuid(), tests.get_supabase_uid('retention_alice'), 1, true, '2029-10-01', '2029-10-01', '2029-10-01'::timestamptz + make_interval(mins => g)
  from generate_series(1, 30) g;
insert into app_private.sync_ops (user_id, op_id, record_id, collection, type, status, version, error, created_at)
select tests.get_supabase_uid('retention_alice'), gen_random_uuid(), gen_random_uuid(), 'tasks', 'upsert', 'applied', 1, null, '2029-10-01'::timestamptz + make_interval(mins => g)
  from generate_series(1, 30) g;
insert into app_private.rate_limit_counters (user_id, operation, session_id, window_start, hits)
select tests.get_supabase_uid('retention_alice'), 'sync.pull', gen_random_uuid(), '2029-12-01'::timestamptz + make_interval(mins => g), 1
  from generate_series(1, 30) g;
select tests.authenticate_as_service_role();
select results_eq($$ select ops_purged, tombstones_purged, changes_purged, rate_limit_counters_purged from app_private.purge_sync_retention('2030-01-01', 10) $$,
  $$ values (30, 30, 30, 30) $$, 'one run purges three batches of each kind');
select tests.clear_authentication();
select results_eq($$ select (select count(*) from app_private.sync_changes where not present and changed_at < '2029-12-02')::int,
                            (select count(*) from app_private.sync_access where not granted and changed_at < '2029-12-02')::int,
                            (select count(*) from app_private.sync_records where deleted and deleted_at < '2029-12-02')::int,
                            (select count(*) from app_private.sync_ops where created_at < '2029-12-02')::int,
                            (select count(*) from app_private.rate_limit_counters where window_start < '2029-12-31')::int $$,
  $$ values (0, 0, 0, 0, 0) $$, 'no expired row is left');
select is((select purged_txid from app_private.sync_horizon), '330'::xid8, 'the horizon rose to the highest txid of the last batch');
select tests.authenticate_as_service_role();
select results_eq($$ select ops_purged, tombstones_purged, changes_purged, rate_limit_counters_purged from app_private.purge_sync_retention('2030-01-01', 10) $$,
  $$ values (0, 0, 0, 0) $$, 'the next run finds nothing');

-- A spent budget (zero) still gives every table its one batch, and stops there.
select tests.clear_authentication();
insert into app_private.sync_ops (user_id, op_id, record_id, collection, type, status, version, error, created_at)
select tests.get_supabase_uid('retention_alice'), gen_random_uuid(), gen_random_uuid(), 'tasks', 'upsert', 'applied', 1, null, '2029-10-01'::timestamptz + make_interval(mins => g)
  from generate_series(1, 25) g;
select tests.authenticate_as_service_role();
select results_eq($$ select ops_purged from app_private.purge_sync_retention('2030-01-01', 10, 30, '0') $$, array[10],
  'a zero time budget: one batch per table');
select results_eq($$ select ops_purged from app_private.purge_sync_retention('2030-01-01', 10) $$, array[15],
  'the next run takes the rest');

-- ------------------------------------------------------------ it stays below the oldest open transaction
-- This file's transaction is open, so its txid is at or above the xmin of every
-- snapshot: the bound no pull reads past while it is open, where every cursor
-- issued meanwhile stands, a full sync's first page included. Expired entries a
-- transaction wrote at or after it (it, and a later one that committed) are
-- kept; the horizon rises only to an older one's txid. Before, they were purged
-- and the horizon rose over that bound: every pull answered 410 until this
-- transaction ended.
select tests.clear_authentication();
update app_private.sync_horizon set purged_txid = '1';
insert into app_private.sync_changes (scope_id, collection, id, present, seq, txid, since_seq, changed_at) values
  (tests.get_supabase_uid('retention_alice'), 'tasks', 'c1000000-0000-4000-8000-0000000000a1', false, 301, '60', 301, '2029-11-01'),
  (tests.get_supabase_uid('retention_alice'), 'tasks', 'c1000000-0000-4000-8000-0000000000a2', false, 302, pg_current_xact_id(), 302, '2029-11-01'),
  (tests.get_supabase_uid('retention_alice'), 'tasks', 'c1000000-0000-4000-8000-0000000000a3', false, 303, (pg_current_xact_id()::text::bigint + 1)::text::xid8, 303, '2029-11-01');
insert into app_private.sync_access (user_id, scope_id, granted, seq, txid, changed_at) values
  (tests.get_supabase_uid('retention_bob'), 'c2000000-0000-4000-8000-0000000000a1', false, 304, '70', '2029-11-01'),
  (tests.get_supabase_uid('retention_bob'), 'c2000000-0000-4000-8000-0000000000a2', false, 305, (pg_current_xact_id()::text::bigint + 1)::text::xid8, '2029-11-01');
select tests.authenticate_as_service_role();
select results_eq($$ select changes_purged from app_private.purge_sync_retention('2030-01-01') $$, array[1],
  'of three expired entries, only the one written before the oldest open transaction is purged');
select tests.clear_authentication();
select results_eq($$ select id::text from app_private.sync_changes where id::text like 'c1000000-0000-4000-8000-0000000000a%' order by id $$,
  $$ values ('c1000000-0000-4000-8000-0000000000a2'), ('c1000000-0000-4000-8000-0000000000a3') $$,
  'the entries of this open transaction and of a later one stay for a later run');
select results_eq($$ select scope_id::text from app_private.sync_access where scope_id::text like 'c2000000-0000-4000-8000-0000000000a%' $$,
  array['c2000000-0000-4000-8000-0000000000a2'], 'so does a later revocation; the older one is purged');
select is((select purged_txid from app_private.sync_horizon), '70'::xid8,
  'the horizon rises to the older revocation''s txid, below every pull''s bound');
select cmp_ok((select purged_txid from app_private.sync_horizon), '<', pg_snapshot_xmin(pg_current_snapshot()),
  'the horizon is below the oldest open transaction: a pull without a cursor, bound there, is not sent to resync');

-- ------------------------------------------------------------ it never waits for a writer
-- A second session (dblink) commits an expired tombstone and keeps it locked,
-- as a push rewriting that row would. The purge must skip it and go on;
-- lock_timeout turns a regression into an error, not a hang. Where the test's
-- role may not open one (tests.open_second_session: `supabase test db` on
-- Supabase), this is skipped.
select tests.clear_authentication();
select set_config('tests.no_second_session', coalesce(tests.open_second_session('retention_writer'), ''), true) = '' as second_session \gset
\if :second_session
select from extensions.dblink_exec('retention_writer', $$
  insert into app_private.sync_records (collection, id, scope_id, version, deleted, created_at, updated_at, deleted_at)
  values ('tasks', 'c3000000-0000-4000-8000-0000000000f1', gen_random_uuid(), 1, true, '2029-01-01', '2029-01-01', '2029-01-01') $$);
select from extensions.dblink_exec('retention_writer', 'begin');
select from extensions.dblink('retention_writer', $$ select 1 from app_private.sync_records where id = 'c3000000-0000-4000-8000-0000000000f1' for update $$) as locked (one integer);
insert into app_private.sync_records (collection, id, scope_id, version, deleted, created_at, updated_at, deleted_at)
values ('tasks', 'c3000000-0000-4000-8000-0000000000f2', gen_random_uuid(), 2, true, '2029-01-01', '2029-01-01', '2029-01-01');
set local lock_timeout = '10s';
select tests.authenticate_as_service_role();
select results_eq($$ select tombstones_purged from app_private.purge_sync_retention('2030-01-01') $$, array[1],
  'the purge skips the tombstone another transaction holds and purges the free one, without waiting');
select tests.clear_authentication();
select results_eq($$ select id::text from app_private.sync_records where id in ('c3000000-0000-4000-8000-0000000000f1', 'c3000000-0000-4000-8000-0000000000f2') $$,
  array['c3000000-0000-4000-8000-0000000000f1'], 'the locked tombstone is still there for a later run');
select from extensions.dblink_exec('retention_writer', 'rollback');
select from extensions.dblink_exec('retention_writer', $$ delete from app_private.sync_records where id = 'c3000000-0000-4000-8000-0000000000f1' $$);
select from extensions.dblink_disconnect('retention_writer');
\else
select diag(current_setting('tests.no_second_session') || ': the purge skipping a writer''s locked row is not checked');
select skip('a writer''s lock needs a second session', 2);
\endif

select * from finish();
rollback;

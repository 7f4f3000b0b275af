-- One account that waits on a lock, or whose attempt a run's statement_timeout
-- cancelled, no longer stops the purge for every account due after it
-- (migration 20261128004000_purge_gives_up_lock_waits_and_rotates_attempts):
-- each account's work gives up a lock wait after lock_timeout (10 s: its
-- attempt fails alone, 55P03, and the run goes on), and each attempt is
-- recorded on the request before its work (the procedure commits it), so a
-- run tries requests never tried first, then the least recently tried.
-- The top-level CALL with a statement_timeout is
-- tests/integration/account-purge-per-account.test.ts.
begin;
select plan(13);

select is((select p.proconfig from pg_proc p where p.oid = 'app_private.purge_account(uuid, timestamptz)'::regprocedure),
  array['search_path=""', 'lock_timeout=10s'],
  'one account''s work gives up a lock wait after 10 s (its own SET clause: the caller''s setting is back after it)');
select is(tests.function_callers('app_private.begin_purge_attempt(timestamptz, timestamptz)'), array['service_role'],
  'begin_purge_attempt: the owner and service_role only');
select is(tests.function_callers('app_private.purge_account(uuid, timestamptz)'), array['service_role'],
  'purge_account: the owner and service_role only');
select throws_ok($$ select app_private.begin_purge_attempt(null, now()) $$, '22023', null, 'begin_purge_attempt: p_now is required');

-- Accounts due long ago (other requests are due later). The app's hook waits
-- for a lock of another session for the first one (a row a writer holds, a
-- hook waiting on something of its own).
select from tests.create_supabase_user('purge151_held');
select from tests.create_supabase_user('purge151_free');
select from tests.create_supabase_user('purge151_cut');
select from tests.create_supabase_user('purge151_next');
create temporary table ids as
  select tests.get_supabase_uid('purge151_held') as held, tests.get_supabase_uid('purge151_free') as free,
         tests.get_supabase_uid('purge151_cut') as cut, tests.get_supabase_uid('purge151_next') as next;
insert into app_private.account_deletion_requests (user_id, requested_at, scheduled_for)
values ((select held from ids), '1999-12-25', '2000-01-01 00:00:00+00'),
       ((select free from ids), '1999-12-25', '2000-01-01 00:00:01+00');

-- A second session (dblink) holds that lock. Where the test's role may not
-- open one (tests.open_second_session: `supabase test db` on Supabase), the
-- lock wait goes unchecked: the hook refuses the first account instead, so
-- that it too is tried and kept, the next one purged, for what follows.
select set_config('tests.no_second_session', coalesce(tests.open_second_session('purge151_holder'), ''), true) = '' as second_session \gset
do $$
begin
  execute format($f$
    create or replace function app_private.before_account_purge(p_user_id uuid) returns void
    language plpgsql security definer set search_path = '' as $h$
    begin
      if p_user_id = %L then
        if pg_catalog.current_setting('tests.purge151_refuse', true) = 'on' then raise exception 'tests: refused'; end if;
        perform pg_catalog.pg_advisory_xact_lock(151151);
      end if;
    end $h$ $f$, (select held from ids));
end
$$;
\if :second_session
select from extensions.dblink('purge151_holder', 'select pg_advisory_lock(151151)') as held (ok text);

-- Without a lock_timeout the run waited for it until cancelled: this bound
-- makes that a failure of this test, not a hang.
set local statement_timeout = '60s';
select results_eq($$ select users_deleted from app_private.run_account_deletions('2000-01-02', 20) $$, array[1],
  'the account waiting on a lock is given up after lock_timeout and the next due account is purged in the same run');
reset statement_timeout;
select is((select count(*)::int from auth.users where id = (select held from ids))
          + (select count(*)::int from app_private.account_deletion_requests where user_id = (select held from ids)), 2,
  'the account given up is kept whole, its request still due');
select is((select count(*)::int from auth.users where id = (select free from ids)), 0, 'the account due after it is gone');
select isnt((select last_attempt_at from app_private.account_deletion_requests where user_id = (select held from ids)), null,
  'the attempt is recorded on the request');
select from extensions.dblink('purge151_holder', 'select pg_advisory_unlock(151151)') as released (ok text);
select from extensions.dblink_disconnect('purge151_holder');
\else
select diag(current_setting('tests.no_second_session') || ': the purge giving up a lock wait is not checked');
select skip('the lock wait needs a second session', 4);
select from set_config('tests.purge151_refuse', 'on', true);
select from app_private.run_account_deletions('2000-01-02', 20);
select from set_config('tests.purge151_refuse', '', true);
\endif

-- Two accounts due after it, never tried. A run takes the first of them (a
-- request never tried before one tried, though due later) and records the
-- attempt; that run is cancelled during it (statement_timeout), so nothing
-- else of it happens.
insert into app_private.account_deletion_requests (user_id, requested_at, scheduled_for)
values ((select cut from ids), '1999-12-25', '2000-01-01 00:00:02+00'),
       ((select next from ids), '1999-12-25', '2000-01-01 00:00:03+00');
select is(app_private.begin_purge_attempt('2000-01-02', clock_timestamp()),
  (select request_id from app_private.account_deletion_requests where user_id = (select cut from ids)),
  'a run takes the requests never tried first, oldest first');

select results_eq($$ select users_deleted from app_private.run_account_deletions('2000-01-02', 1) $$, array[1],
  'the next run deletes one account');
select is((select array_agg(u.raw_user_meta_data ->> 'test_identifier' order by u.raw_user_meta_data ->> 'test_identifier') from auth.users u
            where u.id in ((select held from ids), (select cut from ids), (select next from ids))),
  array['purge151_cut', 'purge151_held'],
  'the one never tried: the cancelled attempt and the one given up wait behind it');
select results_eq($$ select users_deleted from app_private.run_account_deletions('2000-01-02', 1) $$, array[1],
  'the run after');
select is((select array_agg(u.raw_user_meta_data ->> 'test_identifier' order by u.raw_user_meta_data ->> 'test_identifier') from auth.users u
            where u.id in ((select held from ids), (select cut from ids))),
  array['purge151_cut'],
  'deletes the least recently tried (the one given up, its lock free now); the cancelled one is next');

select * from finish();
rollback;

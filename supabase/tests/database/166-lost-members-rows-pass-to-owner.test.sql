-- A member who loses a list (removed by an owner, or leaving) is no longer
-- charged for the rows they created there: those live rows pass to the list's
-- owner, who can delete them (migration 20261128005700). Before, they kept
-- counting against the former member, who could neither see nor delete them,
-- and at the quota every create of theirs was refused with "delete some
-- first". A viewer can still read the list: a demotion keeps the charge (the
-- move rule's reach, 133-moved-rows-change-creator). Usage equals a recount of
-- sync_records throughout. Only as many as fit in the owner's quota pass (migration
-- 20261128006800): 167-lost-members-rows-bounded-by-owner-quota.
begin;
select plan(23);

select from tests.create_supabase_user('lost_alice');
select from tests.create_supabase_user('lost_bob');
select from tests.create_supabase_user('lost_carol');
select from tests.create_supabase_user('lost_dave');
select from tests.create_supabase_user('lost_erin');

create temporary table ids as select
  tests.get_supabase_uid('lost_alice') as alice, tests.get_supabase_uid('lost_bob') as bob,
  tests.get_supabase_uid('lost_carol') as carol, tests.get_supabase_uid('lost_dave') as dave,
  tests.get_supabase_uid('lost_erin') as erin,
  'c6600000-0000-4000-8000-00000000000a'::uuid as shared, 'c6600000-0000-4000-8000-00000000000b'::uuid as bobs;
grant select on ids to authenticated, service_role;

-- Usage against a recount of sync_records (the rows each user is charged for).
create function pg_temp.usage_drift() returns bigint language sql as $$
  select count(*) from (
    select u.user_id from app_private.sync_usage u
     where u.user_id in (select unnest(array[alice, bob, carol, dave, erin]) from ids)
       and u.live_records <> (select count(*) from app_private.sync_records s where s.created_by = u.user_id and not s.deleted)) d
$$;
create function pg_temp.usage(p uuid) returns integer language sql as $$
  select live_records from app_private.sync_usage where user_id = p
$$;
create function pg_temp.refusal_detail(p_sql text) returns text language plpgsql as $$
declare
  v_detail text;
begin
  execute p_sql;
  return null;
exception when check_violation then
  get stacked diagnostics v_detail = pg_exception_detail;
  return v_detail;
end
$$;
create function pg_temp.charged(p_scope uuid, p_user uuid) returns bigint language sql as $$
  select count(*) from app_private.sync_records s where s.scope_id = p_scope and s.created_by = p_user and not s.deleted
$$;

-- The finding's setting: a quota of 3 (a personal list, made at sign-up, counts for no one).
create or replace function app_private.max_live_records_per_user() returns integer
language sql immutable parallel safe set search_path = '' as $$ select 3 $$;

-- Alice's shared list; Carol joins it by an editor invite and writes 2 tasks there.
select tests.authenticate_as('lost_alice');
insert into public.lists (id, title) values ((select shared from ids), 'shared');
select from set_config('tests.code', public.create_list_invite((select shared from ids), 'editor'), true);
select tests.authenticate_as('lost_carol');
select from public.accept_list_invite(current_setting('tests.code'));
insert into public.tasks (list_id, title) select shared, 'carol ' || g from ids, generate_series(1, 2) g;
select tests.clear_authentication();
select is(pg_temp.usage((select carol from ids)), 2, 'Carol''s usage: her 2 tasks in Alice''s list');

-- ------------------------------------------------------------ removal by an owner
select tests.authenticate_as('lost_alice');
select lives_ok($$ delete from public.list_members where list_id = (select shared from ids) and user_id = (select carol from ids) $$,
  'Alice removes Carol (the 2 tasks fit in Alice''s quota)');
select tests.clear_authentication();
select is(pg_temp.usage((select carol from ids)), 0, 'the removed member is no longer charged for the rows she left in the list');
select is(pg_temp.charged((select shared from ids), (select alice from ids)), 3::bigint, 'they are the owner''s, with her list');
select is(pg_temp.usage((select alice from ids)), 3, 'the owner''s usage holds them: at the quota');
select is(pg_temp.usage_drift(), 0::bigint, 'usage equals a recount of sync_records');

select tests.authenticate_as('lost_carol');
select lives_ok($$ insert into public.tasks (list_id, title) select carol, 'mine ' || g from ids, generate_series(1, 3) g $$,
  'Carol creates up to the quota in her own list (before: 23514, "delete some first")');
select tests.authenticate_as('lost_alice');
select throws_ok($$ insert into public.tasks (list_id, title) select shared, 'one more' from ids $$,
  '23514', 'at most 3 live records per user; delete some first',
  'the owner at the quota cannot add');
select is(pg_temp.refusal_detail($$ insert into public.tasks (list_id, title) select shared, 'one more' from ids $$),
  'This write would bring the rows counted for you in synced tables to 4 (those you created, also in lists you left whose owner had no room for them, and those former members left in your lists; rows members create in your lists count for them).',
  'and the refusal says what counts for her');
select lives_ok($$ delete from public.tasks where list_id = (select shared from ids) and title = 'carol 1' $$,
  'and can delete what she was handed');
select tests.clear_authentication();
select is(pg_temp.usage((select alice from ids)), 2, 'which frees her quota');

-- ------------------------------------------------------------ re-added: no double count
select tests.authenticate_as('lost_alice');
select from set_config('tests.code', public.create_list_invite((select shared from ids), 'editor'), true);
select tests.authenticate_as('lost_carol');
select from public.accept_list_invite(current_setting('tests.code'));
select tests.clear_authentication();
select ok(pg_temp.usage((select carol from ids)) = 3 and pg_temp.usage((select alice from ids)) = 2,
  're-adding Carol gives her nothing back and charges nobody twice');

-- ------------------------------------------------------------ leaving
create or replace function app_private.max_live_records_per_user() returns integer
language sql immutable parallel safe set search_path = '' as $$ select 100 $$;
select tests.clear_authentication();
insert into public.list_members (list_id, user_id, role)
select shared, bob, 'editor' from ids union all select shared, dave, 'editor' from ids;
select tests.authenticate_as('lost_bob');
insert into public.tasks (list_id, title) select shared, 'bob' from ids;
select lives_ok($$ delete from public.list_members where list_id = (select shared from ids) and user_id = (select bob from ids) $$,
  'Bob leaves the list');
select tests.clear_authentication();
select ok(pg_temp.usage((select bob from ids)) = 0 and pg_temp.charged((select shared from ids), (select alice from ids)) = 3,
  'the task he left there is the owner''s');

-- ------------------------------------------------------------ demotion: a viewer still reaches the list
select tests.authenticate_as('lost_dave');
insert into public.tasks (list_id, title) select shared, 'dave' from ids;
select tests.authenticate_as('lost_alice');
update public.list_members set role = 'viewer' where list_id = (select shared from ids) and user_id = (select dave from ids);
select tests.clear_authentication();
select is(pg_temp.charged((select shared from ids), (select dave from ids)), 1::bigint,
  'a member demoted to viewer, who still reads the list, stays charged for his task');
select tests.authenticate_as('lost_dave');
delete from public.list_members where list_id = (select shared from ids) and user_id = (select dave from ids);
select tests.clear_authentication();
select ok(pg_temp.usage((select dave from ids)) = 0 and pg_temp.charged((select shared from ids), (select dave from ids)) = 0,
  'and leaves it to the owner when he leaves the list');

-- ------------------------------------------------------------ an owner leaving after handing the list on
-- Bob's list, Erin made owner after Carol: Bob leaves, his list and task go to the longest-standing owner.
select tests.authenticate_as('lost_bob');
insert into public.lists (id, title) values ((select bobs from ids), 'bob''s');
insert into public.tasks (list_id, title) select bobs, 'bob''s task' from ids;
select tests.clear_authentication();
insert into public.list_members (list_id, user_id, role, created_at)
select bobs, carol, 'owner', now() + interval '1 minute' from ids union all
select bobs, erin, 'owner', now() + interval '2 minutes' from ids;
select tests.authenticate_as('lost_bob');
select lives_ok($$ delete from public.list_members where list_id = (select bobs from ids) and user_id = (select bob from ids) $$,
  'Bob, the list''s creator, leaves it to its other owners');
select tests.clear_authentication();
select ok(pg_temp.usage((select bob from ids)) = 0 and pg_temp.charged((select bobs from ids), (select carol from ids)) = 2
          and pg_temp.charged((select bobs from ids), (select erin from ids)) = 0,
  'the list row and his task go to the longest-standing owner');

-- ------------------------------------------------------------ a list's delete, an account's deletion
select tests.authenticate_as('lost_carol');
insert into public.tasks (list_id, title) select bobs, 'carol in bob''s' from ids;
select tests.authenticate_as('lost_erin');
insert into public.tasks (list_id, title) select bobs, 'erin in bob''s' from ids;
select tests.clear_authentication();
select lives_ok($$ delete from auth.users where id = (select erin from ids) $$,
  'Erin''s account is deleted');
select is(pg_temp.charged((select bobs from ids), (select carol from ids)), 3::bigint,
  'a deleted account''s rows are handed to nobody (they count for no one, as before)');
select tests.authenticate_as('lost_carol');
select lives_ok($$ delete from public.lists where id = (select bobs from ids) $$, 'Carol deletes the list');
select tests.clear_authentication();
select is(pg_temp.usage((select carol from ids)), 3, 'its members'' removal by the cascade hands nothing: its rows are gone');

select is(pg_temp.usage_drift(), 0::bigint, 'usage equals a recount of sync_records at the end');

select * from finish();
rollback;

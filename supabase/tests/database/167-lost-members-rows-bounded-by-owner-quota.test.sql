-- The rows a member leaves in a list pass to its owner only as far as the owner's
-- quota has room, oldest first; the rest stay charged to the member until someone
-- deletes them (migration 20261128006800). Before, the hand-over was never bounded:
-- an owner and a member looping "create up to the quota, leave, be invited again"
-- grew the owner's count without limit (3, 6, 9, … with a quota of 3). The two now
-- hold at most twice the quota, as before 005700; a member leaving a list whose
-- owner has room is still freed of all of it. Usage equals a recount of sync_records.
begin;
select plan(17);

select from tests.create_supabase_user('bound_owner');
select from tests.create_supabase_user('bound_member');
select from tests.create_supabase_user('bound_pat');
select from tests.create_supabase_user('bound_quinn');
select from tests.create_supabase_user('bound_rose');
select from tests.create_supabase_user('bound_sam');
select from tests.create_supabase_user('bound_tess');

create temporary table ids as select
  tests.get_supabase_uid('bound_owner') as owner, tests.get_supabase_uid('bound_member') as member,
  tests.get_supabase_uid('bound_pat') as pat, tests.get_supabase_uid('bound_quinn') as quinn,
  tests.get_supabase_uid('bound_rose') as rose, tests.get_supabase_uid('bound_sam') as sam,
  tests.get_supabase_uid('bound_tess') as tess,
  'c6700000-0000-4000-8000-00000000000a'::uuid as shared, 'c6700000-0000-4000-8000-00000000000b'::uuid as pats,
  'c6700000-0000-4000-8000-00000000000c'::uuid as imported;
grant select on ids to authenticated, service_role;

create function pg_temp.usage_drift() returns bigint language sql as $$
  select count(*) from (
    select u.user_id from app_private.sync_usage u
     where u.user_id in (select unnest(array[owner, member, pat, quinn, rose, sam, tess]) from ids)
       and u.live_records <> (select count(*) from app_private.sync_records s where s.created_by = u.user_id and not s.deleted)) d
$$;
create function pg_temp.usage(p uuid) returns integer language sql as $$
  select live_records from app_private.sync_usage where user_id = p
$$;
create function pg_temp.charged(p_scope uuid, p_user uuid) returns bigint language sql as $$
  select count(*) from app_private.sync_records s where s.scope_id = p_scope and s.created_by = p_user and not s.deleted
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
-- The owner invites the member back as an editor.
create function pg_temp.invite(p_owner text, p_member text, p_list uuid) returns void language plpgsql as $$
begin
  perform tests.authenticate_as(p_owner);
  perform set_config('tests.code', public.create_list_invite(p_list, 'editor'), true);
  perform tests.authenticate_as(p_member);
  perform public.accept_list_invite(current_setting('tests.code'));
  perform tests.clear_authentication();
end
$$;

-- The finding's setting: a quota of 3 (a personal list, made at sign-up, counts for no one).
create or replace function app_private.max_live_records_per_user() returns integer
language sql immutable parallel safe set search_path = '' as $$ select 3 $$;

-- ------------------------------------------------------------ the loop: bounded
select tests.authenticate_as('bound_owner');
insert into public.lists (id, title) values ((select shared from ids), 'shared');
select pg_temp.invite('bound_owner', 'bound_member', (select shared from ids));
select tests.authenticate_as('bound_member');
insert into public.tasks (list_id, title) select shared, 'round 1 #' || g from ids, generate_series(1, 3) g;
select lives_ok($$ delete from public.list_members where list_id = (select shared from ids) and user_id = (select member from ids) $$,
  'round 1: the member, at the quota, leaves');
select tests.clear_authentication();
select ok(pg_temp.usage((select owner from ids)) = 3 and pg_temp.usage((select member from ids)) = 1,
  'the owner (her list) takes the 2 tasks her quota has room for, the member stays charged for the third');
select is(pg_temp.charged((select shared from ids), (select member from ids)), 1::bigint, 'that task is still the member''s');
select is(pg_temp.usage_drift(), 0::bigint, 'usage equals a recount of sync_records');

select pg_temp.invite('bound_owner', 'bound_member', (select shared from ids));
select tests.authenticate_as('bound_member');
select throws_ok($$ insert into public.tasks (list_id, title) select shared, 'round 2 #' || g from ids, generate_series(1, 3) g $$,
  '23514', 'at most 3 live records per user; delete some first',
  'round 2: back in the list, the member cannot create 3 more (his task there still counts)');
select lives_ok($$ insert into public.tasks (list_id, title) select shared, 'round 2 #' || g from ids, generate_series(1, 2) g $$,
  'he creates up to the quota');
select lives_ok($$ delete from public.list_members where list_id = (select shared from ids) and user_id = (select member from ids) $$,
  'and leaves again');
select tests.clear_authentication();
select ok(pg_temp.usage((select owner from ids)) = 3 and pg_temp.usage((select member from ids)) = 3,
  'the owner has no room: nothing passes, the member stays charged (before: the owner at 7)');

select pg_temp.invite('bound_owner', 'bound_member', (select shared from ids));
select tests.authenticate_as('bound_member');
select is(pg_temp.refusal_detail($$ insert into public.tasks (list_id, title) select shared, 'round 3' from ids $$),
  'This write would bring the rows counted for you in synced tables to 4 (those you created, also in lists you left whose owner had no room for them, and those former members left in your lists; rows members create in your lists count for them).',
  'round 3: the member''s create is refused, and the refusal says what counts for him');
select lives_ok($$ delete from public.list_members where list_id = (select shared from ids) and user_id = (select member from ids) $$,
  'he leaves a third time');
select tests.clear_authentication();
select ok(pg_temp.usage((select owner from ids)) + pg_temp.usage((select member from ids)) = 6
          and pg_temp.usage((select owner from ids)) = 3,
  'the two hold twice the quota at most, the owner no more than the quota');

select tests.authenticate_as('bound_owner');
select lives_ok($$ delete from public.tasks where list_id = (select shared from ids) and title like 'round%' $$,
  'the owner deletes the tasks the member left');
select tests.clear_authentication();
select ok(pg_temp.usage((select member from ids)) = 0 and pg_temp.usage((select owner from ids)) = 1,
  'which frees the member''s quota too');

-- ------------------------------------------------------------ room shared by the members leaving at once
select tests.authenticate_as('bound_pat');
insert into public.lists (id, title) values ((select pats from ids), 'pat''s');
select pg_temp.invite('bound_pat', 'bound_quinn', (select pats from ids));
select pg_temp.invite('bound_pat', 'bound_rose', (select pats from ids));
select tests.authenticate_as('bound_quinn');
insert into public.tasks (list_id, title) select pats, 'quinn' from ids;
select tests.authenticate_as('bound_rose');
insert into public.tasks (list_id, title) select pats, 'rose ' || g from ids, generate_series(1, 2) g;
select tests.authenticate_as('bound_pat');
select lives_ok($$ delete from public.list_members where list_id = (select pats from ids) and role = 'editor' $$,
  'Pat removes both editors in one statement');
select tests.clear_authentication();
select ok(pg_temp.usage((select pat from ids)) = 3
          and pg_temp.charged((select pats from ids), (select quinn from ids)) + pg_temp.charged((select pats from ids), (select rose from ids)) = 1,
  'her room (2) is shared: 2 of their 3 tasks pass to her, 1 stays its creator''s');

-- ------------------------------------------------------------ the normal case: the owner has room
-- A list the service role made (no creator: its owner has no usage row yet).
insert into public.lists (id, title) select imported, 'imported' from ids;
insert into public.list_members (list_id, user_id, role) select imported, sam, 'owner' from ids;
select pg_temp.invite('bound_sam', 'bound_tess', (select imported from ids));
select tests.authenticate_as('bound_tess');
insert into public.tasks (list_id, title) select imported, 'tess ' || g from ids, generate_series(1, 3) g;
delete from public.list_members where list_id = (select imported from ids) and user_id = (select tess from ids);
select tests.clear_authentication();
select ok(pg_temp.usage((select tess from ids)) = 0 and pg_temp.usage((select sam from ids)) = 3,
  'an owner with room takes all the rows a member leaves (here up to the quota exactly, from no usage row)');

select is(pg_temp.usage_drift(), 0::bigint, 'usage equals a recount of sync_records at the end');

select * from finish();
rollback;

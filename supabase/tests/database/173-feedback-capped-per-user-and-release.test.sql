-- A user sends at most app_private.max_feedback_per_user_and_release() (50)
-- feedback on one release (migration 20261128010200). Anyone who may see a
-- release (every user, on an `everyone` channel) could post without bound but
-- the rate limit's, and bury the testers' reports. The table keeps the cap for
-- every insert, whoever makes it: a statement that would take a user past it is
-- refused whole (23514, constraint max_feedback_per_user_and_release).
begin;
select plan(13);

do $$ begin
  perform tests.create_supabase_user('cap_tester');
  perform tests.create_supabase_user('cap_other');
end $$;
insert into app_private.tester_groups (id, name) values ('00000000-0000-4000-8000-000000001731', 'Beta testers 173');
insert into app_private.tester_group_members (group_id, user_id) values
  ('00000000-0000-4000-8000-000000001731', tests.get_supabase_uid('cap_tester')),
  ('00000000-0000-4000-8000-000000001731', tests.get_supabase_uid('cap_other'));
insert into app_private.tester_group_channels (group_id, channel) values ('00000000-0000-4000-8000-000000001731', 'beta-173');
insert into app_private.releases (id, platform, channel, kind, version, build_number, artifact_path, artifact_sha256, artifact_size) values
  ('00000000-0000-4000-8000-0000000017b1', 'ios', 'beta-173', 'binary', '2.0.0', 200, 'ios/beta-173/200.ipa', repeat('a', 64), 1000),
  ('00000000-0000-4000-8000-0000000017b2', 'ios', 'beta-173', 'binary', '2.0.1', 201, 'ios/beta-173/201.ipa', repeat('b', 64), 1000);

-- p_count feedback of the caller (auth.uid(), or p_user) on p_release, in one statement.
create function pg_temp.send(p_release uuid, p_count integer, p_user uuid default null) returns void language sql as $$
  insert into app_private.release_feedback (release_id, user_id, platform, build_number, body)
  select p_release, coalesce(p_user, auth.uid()), 'ios', 200, 'report ' || i from generate_series(1, p_count) i
$$;
create function pg_temp.count(p_release uuid, p_user text) returns integer language sql as $$
  select count(*)::integer from app_private.release_feedback where release_id = p_release and user_id = tests.get_supabase_uid(p_user)
$$;
-- The constraint a refused statement names (null when it was not refused).
create function pg_temp.refusing_constraint(p_statement text) returns text language plpgsql as $$
declare
  v_constraint text;
begin
  execute p_statement;
  return null;
exception when check_violation then
  get stacked diagnostics v_constraint = constraint_name;
  return v_constraint;
end;
$$;

select is(app_private.max_feedback_per_user_and_release(), 50, 'the cap is 50 feedback per user and release');
select ok(not has_function_privilege('authenticated', 'app_private.refuse_feedback_over_cap()', 'execute')
      and not has_function_privilege('service_role', 'app_private.refuse_feedback_over_cap()', 'execute'),
  'no API role may call the trigger function');

-- ------------------------------------------------------------ a tester, through RLS
select tests.authenticate_as('cap_tester');
select lives_ok($$ select pg_temp.send('00000000-0000-4000-8000-0000000017b1', 49) $$, '49 feedback on a release');
select throws_ok($$ select pg_temp.send('00000000-0000-4000-8000-0000000017b1', 2) $$,
  '23514', 'a user sends at most 50 feedback on one release', 'a statement of 2 more, which would make 51, is refused, saying why');
select is(pg_temp.count('00000000-0000-4000-8000-0000000017b1', 'cap_tester'), 49, 'refused whole: none of its rows stays');
select lives_ok($$ select pg_temp.send('00000000-0000-4000-8000-0000000017b1', 1) $$, 'the 50th is taken');
select is(pg_temp.refusing_constraint($$ select pg_temp.send('00000000-0000-4000-8000-0000000017b1', 1) $$),
  'max_feedback_per_user_and_release', 'the 51st is refused with the constraint the API maps');
select lives_ok($$ select pg_temp.send('00000000-0000-4000-8000-0000000017b2', 1) $$, 'another release has a cap of its own');
select tests.clear_authentication();

select tests.authenticate_as('cap_other');
select lives_ok($$ select pg_temp.send('00000000-0000-4000-8000-0000000017b1', 50) $$, 'so has another user: 50 on the same release');
select throws_ok($$ select pg_temp.send('00000000-0000-4000-8000-0000000017b1', 1) $$, '23514', null, 'and their 51st is refused');
select tests.clear_authentication();

-- ------------------------------------------------------------ the table's owner
select throws_ok(
  $$ select pg_temp.send('00000000-0000-4000-8000-0000000017b1', 1, tests.get_supabase_uid('cap_tester')) $$,
  '23514', null, 'the connecting role, which owns the table or is the superuser, is bound too');
select is(pg_temp.count('00000000-0000-4000-8000-0000000017b1', 'cap_tester'), 50, 'the tester keeps 50 on the release');
select is(pg_temp.count('00000000-0000-4000-8000-0000000017b1', 'cap_other'), 50, 'and so does the other user');

select * from finish();
rollback;

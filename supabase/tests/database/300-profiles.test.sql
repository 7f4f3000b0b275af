-- public.profiles: RLS and its exact policies; what the owner, another user,
-- anon and the service role can do; the column privileges (a user can set
-- display_name and completed_steps only, never completed_at, ids or
-- timestamps); completed_at derived by the database; the signup trigger on
-- auth.users (as Supabase Auth's own role) creates the profile and nothing
-- another user can see; EXECUTE privileges of the functions involved.
begin;
select plan(60);

do $$ begin
  perform tests.create_supabase_user('profile_owner');
  perform tests.create_supabase_user('profile_other');
end $$;

-- ------------------------------------------------------------ structure
select tests.rls_enabled('public');
select policies_are('public', 'profiles', array[
  'Users can read their own profile',
  'Users can update their own profile'
]);
select policy_cmd_is('public', 'profiles', 'Users can read their own profile', 'select', 'the read policy is for SELECT');
select policy_cmd_is('public', 'profiles', 'Users can update their own profile', 'update', 'the update policy is for UPDATE');
select policy_roles_are('public', 'profiles', 'Users can read their own profile', array['authenticated'], 'the read policy is for authenticated');
select policy_roles_are('public', 'profiles', 'Users can update their own profile', array['authenticated'], 'the update policy is for authenticated');

-- Supabase's default grants were revoked; exactly these remain.
select table_privs_are('public', 'profiles', 'anon', array[]::text[], 'anon has no privilege on profiles');
select table_privs_are('public', 'profiles', 'authenticated', array['SELECT'], 'authenticated may only SELECT the table (updates are per column)');
select table_privs_are('public', 'profiles', 'service_role', array['SELECT'], 'service_role may read profiles, not write them');
select ok(has_column_privilege('authenticated', 'public.profiles', 'display_name', 'UPDATE'), 'authenticated may update display_name');
select ok(has_column_privilege('authenticated', 'public.profiles', 'completed_steps', 'UPDATE'), 'authenticated may update completed_steps');
select ok(
  not has_column_privilege('authenticated', 'public.profiles', 'completed_at', 'UPDATE')
  and not has_column_privilege('authenticated', 'public.profiles', 'id', 'UPDATE')
  and not has_column_privilege('authenticated', 'public.profiles', 'created_at', 'UPDATE')
  and not has_column_privilege('authenticated', 'public.profiles', 'updated_at', 'UPDATE'),
  'authenticated may not update completed_at, id, created_at or updated_at'
);

-- ------------------------------------------------------- signup trigger
select results_eq(
  $$ select count(*)::int from public.profiles where id in (tests.get_supabase_uid('profile_owner'), tests.get_supabase_uid('profile_other')) $$,
  array[2],
  'creating a user creates their profile'
);
select results_eq(
  $$ select completed_steps, completed_at from public.profiles where id = tests.get_supabase_uid('profile_owner') $$,
  $$ values ('{}'::text[], null::timestamptz) $$,
  'a new profile has no onboarding step done'
);

-- As Supabase Auth itself signs a user up: as its role, which cannot write
-- public. `supabase test db` on Supabase runs as postgres, no longer a member
-- of supabase_auth_admin (supabase/postgres 20240319072844_lock_down_postgres_access_to_auth_and_storage):
-- there a role made like it for this transaction (postgres may create roles)
-- signs the user up, through a view of auth.users the runner owns (it may not
-- grant on auth.users itself; the view writes with the runner's rights, the
-- trigger fires for the role like it).
select pg_has_role(current_user, 'supabase_auth_admin', 'member') as as_auth_admin \gset
\if :as_auth_admin
\set signup_role supabase_auth_admin
\set signup_into auth.users
\else
select diag(format('%s may not act as supabase_auth_admin: tidesync_test_auth_admin, a role like it, signs up', current_user));
create role tidesync_test_auth_admin nologin noinherit;
grant tidesync_test_auth_admin to current_user;
create view public.tidesync_test_auth_users as
  select instance_id, id, aud, role, email, raw_user_meta_data, created_at, updated_at from auth.users;
grant usage on schema public to tidesync_test_auth_admin;
grant insert on public.tidesync_test_auth_users to tidesync_test_auth_admin;
\set signup_role tidesync_test_auth_admin
\set signup_into public.tidesync_test_auth_users
\endif
set local role :signup_role;
set local search_path = auth;  -- as GoTrue's connection has (the role's setting)
insert into :signup_into (instance_id, id, aud, role, email, raw_user_meta_data, created_at, updated_at)
values ('00000000-0000-0000-0000-000000000000', '3f0c1a34-51c6-4c1e-9a3e-000000000300', 'authenticated', 'authenticated',
        'signup-300@test.tidesync.dev', '{"full_name": "  Grace Hopper  ", "test_identifier": "profile_signup"}', '2026-02-03 04:05:06+00', now());
reset role;
reset search_path;
select results_eq(
  $$ select display_name, created_at from public.profiles where id = '3f0c1a34-51c6-4c1e-9a3e-000000000300' $$,
  $$ values ('Grace Hopper'::text, '2026-02-03 04:05:06+00'::timestamptz) $$,
  'a signup by Supabase Auth''s role creates the profile, named from user metadata, created when the user was'
);
select is_empty(
  $$ select 1 from app_private.devices d where d.user_id = '3f0c1a34-51c6-4c1e-9a3e-000000000300'
     union all select 1 from app_private.notification_preferences p where p.user_id = '3f0c1a34-51c6-4c1e-9a3e-000000000300'
     union all select 1 from app_private.notification_preference_audit a where a.user_id = '3f0c1a34-51c6-4c1e-9a3e-000000000300' $$,
  'the signup creates nothing but the profile'
);
select tests.authenticate_as('profile_other');
select is_empty(
  $$ select 1 from public.profiles where id = '3f0c1a34-51c6-4c1e-9a3e-000000000300' $$,
  'another user cannot see the new profile'
);
select tests.clear_authentication();

-- ------------------------------------------------------------- the owner
select tests.authenticate_as('profile_owner');
select results_eq(
  $$ select id from public.profiles $$,
  array[tests.get_supabase_uid('profile_owner')],
  'the owner sees exactly their own profile'
);
select lives_ok(
  $$ update public.profiles set display_name = 'Owner', completed_steps = '{profile,welcome,welcome}' where id = auth.uid() $$,
  'the owner updates display_name and completed_steps'
);
select results_eq(
  $$ select display_name, completed_steps, completed_at from public.profiles $$,
  $$ values ('Owner'::text, '{welcome,profile}'::text[], null::timestamptz) $$,
  'completed_steps are stored deduplicated in the declared order; completed_at stays null while steps are missing'
);
select lives_ok(
  $$ update public.profiles set completed_steps = app_private.onboarding_steps() where id = auth.uid() $$,
  'the owner completes every step'
);
select isnt(
  (select completed_at from public.profiles),
  null,
  'the database sets completed_at when every step is done'
);
select throws_ok(
  $$ update public.profiles set completed_steps = '{welcome,teleport}' where id = auth.uid() $$,
  '23514', null,
  'an unknown onboarding step is refused by the check constraint'
);
select throws_ok(
  $$ update public.profiles set display_name = '' where id = auth.uid() $$,
  '23514', null,
  'an empty display name is refused'
);
select throws_ok(
  $$ update public.profiles set display_name = E'\u3000Ada\t' where id = auth.uid() $$,
  '23514', null,
  'a display name with surrounding whitespace other than spaces (U+3000, tab) is refused (migration 20261127000110)'
);
select throws_ok(
  $$ update public.profiles set display_name = E'\u00a0' where id = auth.uid() $$,
  '23514', null,
  'a display name of whitespace only (NBSP) is refused'
);
select throws_ok(
  $$ update public.profiles set completed_at = now() where id = auth.uid() $$,
  '42501', null,
  'the owner cannot set completed_at'
);
select throws_ok(
  $$ update public.profiles set id = gen_random_uuid() where id = auth.uid() $$,
  '42501', null,
  'the owner cannot change the id'
);
select throws_ok(
  $$ update public.profiles set created_at = now() - interval '1 year' where id = auth.uid() $$,
  '42501', null,
  'the owner cannot set created_at'
);
select throws_ok(
  $$ update public.profiles set updated_at = now() where id = auth.uid() $$,
  '42501', null,
  'the owner cannot set updated_at'
);
select throws_ok(
  $$ insert into public.profiles (id) values (gen_random_uuid()) $$,
  '42501', null,
  'a user cannot insert profiles (the signup trigger does)'
);
select throws_ok(
  $$ delete from public.profiles where id = auth.uid() $$,
  '42501', null,
  'a user cannot delete their profile (it goes with the auth user)'
);
select tests.clear_authentication();

-- --------------------------------------------------------- another user
select tests.authenticate_as('profile_other');
select is_empty(
  $$ select 1 from public.profiles where id = tests.get_supabase_uid('profile_owner') $$,
  'another user cannot read the owner''s profile'
);
update public.profiles set display_name = 'Hijacked' where id = tests.get_supabase_uid('profile_owner');
select tests.clear_authentication();
select results_eq(
  $$ select display_name from public.profiles where id = tests.get_supabase_uid('profile_owner') $$,
  array['Owner'::text],
  'another user''s update of the owner''s profile changes nothing'
);
select tests.authenticate_as('profile_other');
select throws_ok(
  format($$ update public.profiles set id = %L where id = auth.uid() $$, tests.get_supabase_uid('profile_owner')),
  '42501', null,
  'a user cannot move their profile onto another user''s id'
);
select tests.clear_authentication();

-- ------------------------------------------------------------------ anon
select tests.authenticate_as_anon();
select throws_ok($$ select * from public.profiles $$, '42501', null, 'anon cannot read profiles');
select throws_ok($$ update public.profiles set display_name = 'x' $$, '42501', null, 'anon cannot update profiles');
select tests.clear_authentication();

-- ---------------------------------------------------------- service role
select tests.authenticate_as_service_role();
select ok(
  (select count(*) from public.profiles where id in (tests.get_supabase_uid('profile_owner'), tests.get_supabase_uid('profile_other'))) = 2,
  'the service role reads every profile'
);
select throws_ok($$ update public.profiles set display_name = 'x' $$, '42501', null, 'the service role cannot update profiles');
select tests.clear_authentication();

-- ------------------------------------------------------------- cascade
delete from auth.users where id = '3f0c1a34-51c6-4c1e-9a3e-000000000300';
select is_empty($$ select 1 from public.profiles where id = '3f0c1a34-51c6-4c1e-9a3e-000000000300' $$, 'deleting the user deletes the profile');

-- ---------------------------------------- complete_onboarding_steps(p_steps)
-- Adds to the caller's stored steps: two devices marking different steps
-- from the same stale view both count (the direct update would keep the last).
select tests.authenticate_as('profile_owner');
select lives_ok($$ update public.profiles set completed_steps = '{welcome}' where id = auth.uid() $$,
  'the direct update still resets the steps');
select results_eq(
  $$ select * from public.complete_onboarding_steps('{profile}') $$,
  $$ values ('{welcome,profile}'::text[], null::timestamptz) $$,
  'a device marks a step: it is added to the stored ones, and the state is answered'
);
select results_eq(
  $$ select * from public.complete_onboarding_steps('{first_sync,welcome,first_sync}') $$,
  $$ values ('{welcome,profile,first_sync}'::text[], null::timestamptz) $$,
  'another device, from its older view, marks its steps: nothing already stored is lost, duplicates go, declared order'
);
select results_eq(
  $$ select completed_steps, completed_at is null from public.complete_onboarding_steps(null) $$,
  $$ values ('{welcome,profile,first_sync}'::text[], true) $$,
  'null adds nothing'
);
select throws_ok($$ select public.complete_onboarding_steps('{teleport}') $$, '23514', null,
  'an unknown step is refused by the check constraint');
select results_eq(
  $$ select completed_steps, completed_at is not null from public.complete_onboarding_steps('{notifications}') $$,
  $$ values (app_private.onboarding_steps(), true) $$,
  'the last step sets completed_at'
);
select results_eq(
  $$ select completed_steps, completed_at = (select completed_at from public.profiles) from public.complete_onboarding_steps('{welcome}') $$,
  $$ values (app_private.onboarding_steps(), true) $$,
  'marking a done step again keeps every step and the completion time'
);
select tests.clear_authentication();

select tests.authenticate_as('profile_other');
select results_eq(
  $$ select * from public.complete_onboarding_steps('{welcome}') $$,
  $$ values ('{welcome}'::text[], null::timestamptz) $$,
  'another user marks steps on their own profile only'
);
select tests.clear_authentication();
select results_eq(
  $$ select completed_steps from public.profiles where id = tests.get_supabase_uid('profile_owner') $$,
  $$ values (app_private.onboarding_steps()) $$,
  'another user''s call leaves the owner''s steps alone'
);

select tests.authenticate_as_anon();
select throws_ok($$ select public.complete_onboarding_steps('{welcome}') $$, '42501', null, 'anon cannot call complete_onboarding_steps');
select tests.clear_authentication();
select tests.authenticate_as_service_role();
select throws_ok($$ select public.complete_onboarding_steps('{welcome}') $$, '42501', null,
  'the service role cannot call it (it has no user, and may not write profiles)');
select tests.clear_authentication();

select is(tests.function_callers('public.complete_onboarding_steps(text[])'), array['authenticated'],
  'complete_onboarding_steps(): EXECUTE for authenticated only (not public, anon or service_role)');
select is(
  (select prosecdef::text || ' ' || array_to_string(proconfig, ',') from pg_proc where oid = 'public.complete_onboarding_steps(text[])'::regprocedure),
  'false search_path=""',
  'complete_onboarding_steps() is security invoker (RLS and column privileges decide) and pins an empty search_path'
);

-- --------------------------------------------------- function privileges
select ok(
  has_function_privilege('authenticated', 'app_private.onboarding_steps()', 'execute')
  and not has_function_privilege('anon', 'app_private.onboarding_steps()', 'execute')
  and not has_function_privilege('service_role', 'app_private.onboarding_steps()', 'execute'),
  'onboarding_steps(): EXECUTE for authenticated only (its check constraint runs as the writer)'
);
select ok(
  not has_function_privilege('anon', 'app_private.create_profile_for_new_user()', 'execute')
  and not has_function_privilege('authenticated', 'app_private.create_profile_for_new_user()', 'execute')
  and not has_function_privilege('service_role', 'app_private.create_profile_for_new_user()', 'execute'),
  'create_profile_for_new_user(): no API role may execute it (trigger only)'
);
select ok(
  not has_function_privilege('anon', 'app_private.maintain_profile_onboarding()', 'execute')
  and not has_function_privilege('authenticated', 'app_private.maintain_profile_onboarding()', 'execute')
  and not has_function_privilege('service_role', 'app_private.maintain_profile_onboarding()', 'execute'),
  'maintain_profile_onboarding(): no API role may execute it (trigger only)'
);
select ok(
  not has_function_privilege('anon', 'app_private.display_name_from_user_metadata(jsonb)', 'execute')
  and not has_function_privilege('authenticated', 'app_private.display_name_from_user_metadata(jsonb)', 'execute')
  and not has_function_privilege('service_role', 'app_private.display_name_from_user_metadata(jsonb)', 'execute'),
  'display_name_from_user_metadata(): no API role may execute it'
);
select ok(
  not has_function_privilege('anon', 'app_private.trim_display_name(text)', 'execute')
  and has_function_privilege('authenticated', 'app_private.trim_display_name(text)', 'execute')
  and not has_function_privilege('service_role', 'app_private.trim_display_name(text)', 'execute'),
  'trim_display_name(): only authenticated (the writer the check constraint runs as) may execute it'
);
select is(
  (select prosecdef from pg_proc where oid = 'app_private.create_profile_for_new_user()'::regprocedure),
  true,
  'the signup trigger function is security definer'
);
select is(
  (select proconfig from pg_proc where oid = 'app_private.create_profile_for_new_user()'::regprocedure),
  array['search_path=""'],
  'the signup trigger function pins an empty search_path'
);

select * from finish();
rollback;

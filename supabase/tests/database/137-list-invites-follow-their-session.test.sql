-- An invite code works only while the Supabase session that created it still
-- counts (app_private.invite_is_honoured, list_invites.created_session,
-- migration 20261128002400). The threat: a stolen session of Alice's mints an
-- owner code while it is live; Alice's deletion request (or remote sign-out)
-- signs it out; the thief's own account (Mallory) must then not join, read
-- the list, nor be handed it by the purge. Calls as PostgREST makes them
-- (role authenticated + request.jwt.claims, the token's session_id).
begin;
select plan(19);

select from unnest(array['follow_alice', 'follow_mallory', 'follow_bob', 'follow_carol']) name,
  lateral tests.create_supabase_user(name);
-- A second session of Alice's (the stolen one), and one of Carol's: created
-- later, so tests.authenticate_as still picks each user's first.
insert into auth.sessions (id, user_id, aal, created_at, updated_at, user_agent) values
  ('f7100000-0000-4000-8000-000000000001', tests.get_supabase_uid('follow_alice'), 'aal1', now() + interval '1 second', now(), 'stolen'),
  ('f7100000-0000-4000-8000-000000000002', tests.get_supabase_uid('follow_carol'), 'aal1', now() + interval '1 second', now(), 'tablet');

-- tests.authenticate_as, with the token of another of the user's sessions.
create function pg_temp.authenticate_with_session(p_who text, p_session uuid) returns void language plpgsql as $$
begin
  perform tests.authenticate_as(p_who);
  perform set_config('request.jwt.claims',
    jsonb_set(current_setting('request.jwt.claims')::jsonb, '{session_id}', to_jsonb(p_session))::text, true);
end;
$$;

-- ------------------------------------------------------------ the column
select is(has_column_privilege('authenticated', 'app_private.list_invites', 'created_session', 'select'), false,
  'users cannot read which session created an invite (a co-owner learns no session id)');
select is(has_column_privilege('authenticated', 'app_private.list_invites', 'created_session', 'insert'), false,
  'nor write it: it is the token''s session_id, by default');
select is(tests.function_callers('app_private.invite_is_honoured(uuid, uuid, uuid)'), '{}'::text[],
  'invite_is_honoured: no API role (it reads auth.sessions)');

-- ------------------------------------------------------------ the stolen session and the deletion request
select tests.authenticate_as('follow_alice');
insert into public.lists (id, title) values ('f7000000-0000-4000-8000-000000000001', 'Private');
insert into public.tasks (list_id, title) values ('f7000000-0000-4000-8000-000000000001', 'secret');
select from set_config('tests.own_code', public.create_list_invite('f7000000-0000-4000-8000-000000000001', 'viewer'), true);
select pg_temp.authenticate_with_session('follow_alice', 'f7100000-0000-4000-8000-000000000001');
select from set_config('tests.stolen_code', public.create_list_invite('f7000000-0000-4000-8000-000000000001', 'owner'), true);
select tests.clear_authentication();
select results_eq($$ select created_session from app_private.list_invites
                      where code_sha256 = sha256(convert_to(current_setting('tests.stolen_code'), 'UTF8')) $$,
  array['f7100000-0000-4000-8000-000000000001'::uuid], 'the invite records the session that created it');

-- POST /v1/users/me/deletion from Alice's own session signs the stolen one out.
select tests.authenticate_as('follow_alice');
select from app_private.request_account_deletion(7);
select tests.authenticate_as('follow_mallory');
select throws_ok(format('select public.accept_list_invite(%L)', current_setting('tests.stolen_code')),
  'P0002', 'this invite code is not valid (wrong, already used or expired)',
  'the owner code the stolen session created while live fails like a wrong one once it is signed out');
select is((select count(*)::int from public.tasks where list_id = 'f7000000-0000-4000-8000-000000000001'), 0,
  'Mallory reads none of Alice''s tasks');
select tests.authenticate_as('follow_bob');
select is(public.accept_list_invite(current_setting('tests.own_code')), 'f7000000-0000-4000-8000-000000000001'::uuid,
  'the code of the session that asked (it stays signed in) still works');

-- Cancelling does not bring the stolen session's code back; asking again, the purge.
select tests.authenticate_as('follow_alice');
select from app_private.cancel_account_deletion();
select tests.authenticate_as('follow_mallory');
select throws_ok(format('select public.accept_list_invite(%L)', current_setting('tests.stolen_code')),
  'P0002', 'this invite code is not valid (wrong, already used or expired)',
  'after a cancel the code still admits nobody: its session stays signed out');
select tests.authenticate_as('follow_alice');
select from app_private.request_account_deletion(7);
select tests.clear_authentication();
select results_eq($$ select users_deleted, lists_handed_over from app_private.run_account_deletions(now() + interval '400 days') $$,
  $$ values (1, 1) $$, 'the purge deletes Alice and hands one list over');
select results_eq($$ select user_id, role from public.list_members where list_id = 'f7000000-0000-4000-8000-000000000001' $$,
  $$ values (tests.get_supabase_uid('follow_bob'), 'owner') $$,
  'to Bob, whom Alice invited, not to Mallory');
select is_empty($$ select 1 from public.list_members where user_id = tests.get_supabase_uid('follow_mallory')
                     and list_id <> tests.get_supabase_uid('follow_mallory') $$,
  'Mallory is a member of no list but her own');

-- ------------------------------------------------------------ sign-out of one session, the end by time
select tests.authenticate_as('follow_carol');
insert into public.lists (id, title) values ('f7000000-0000-4000-8000-000000000002', 'Carol''s');
select from set_config('tests.carol_code', public.create_list_invite('f7000000-0000-4000-8000-000000000002', 'editor'), true);
select pg_temp.authenticate_with_session('follow_carol', 'f7100000-0000-4000-8000-000000000002');
select from set_config('tests.tablet_code', public.create_list_invite('f7000000-0000-4000-8000-000000000002', 'editor'), true);
select from set_config('tests.tablet_code_2', public.create_list_invite('f7000000-0000-4000-8000-000000000002', 'viewer'), true);
select tests.clear_authentication();

-- The session's time is up (Supabase Auth's not_after; the time-box and the
-- inactivity timeout count alike, app_private.session_has_ended).
update auth.sessions set not_after = now() - interval '1 second' where id = 'f7100000-0000-4000-8000-000000000002';
select tests.authenticate_as('follow_mallory');
select throws_ok(format('select public.accept_list_invite(%L)', current_setting('tests.tablet_code')),
  'P0002', 'this invite code is not valid (wrong, already used or expired)', 'a session ended by time admits nobody either');
select tests.clear_authentication();
update auth.sessions set not_after = null where id = 'f7100000-0000-4000-8000-000000000002';
select tests.authenticate_as('follow_mallory');
select is(public.accept_list_invite(current_setting('tests.tablet_code')), 'f7000000-0000-4000-8000-000000000002'::uuid,
  'while the session counts, its codes work');

-- DELETE /v1/devices/{id} (or the tablet's own sign-out) deletes its session.
select tests.clear_authentication();
delete from auth.sessions where id = 'f7100000-0000-4000-8000-000000000002';
select tests.authenticate_as('follow_bob');
select throws_ok(format('select public.accept_list_invite(%L)', current_setting('tests.tablet_code_2')),
  'P0002', 'this invite code is not valid (wrong, already used or expired)', 'a signed-out session''s other code admits nobody');
select is(public.accept_list_invite(current_setting('tests.carol_code')), 'f7000000-0000-4000-8000-000000000002'::uuid,
  'Carol''s codes from the session still signed in work');
select tests.clear_authentication();
select results_eq($$ select count(*)::int from app_private.list_invites
                      where list_id = 'f7000000-0000-4000-8000-000000000002' and used_at is not null $$,
  array[2], 'the used codes stay, for the owners to see who joined (and for the export)');

-- ------------------------------------------------------------ the cap
-- 100 codes of a session that is then signed out no longer keep the owner from inviting.
insert into auth.sessions (id, user_id, aal, created_at, updated_at, user_agent)
values ('f7100000-0000-4000-8000-000000000003', tests.get_supabase_uid('follow_carol'), 'aal1', now() + interval '1 second', now(), 'laptop');
select pg_temp.authenticate_with_session('follow_carol', 'f7100000-0000-4000-8000-000000000003');
select from (select public.create_list_invite('f7000000-0000-4000-8000-000000000002', 'viewer') from generate_series(1, 100)) laptop;
select tests.authenticate_as('follow_carol');
select throws_ok($$ select public.create_list_invite('f7000000-0000-4000-8000-000000000002', 'viewer') $$, '23514', null,
  'the laptop''s 100 codes count while it is signed in');
select tests.clear_authentication();
delete from auth.sessions where id = 'f7100000-0000-4000-8000-000000000003';
select tests.authenticate_as('follow_carol');
select lives_ok($$ select public.create_list_invite('f7000000-0000-4000-8000-000000000002', 'viewer') $$,
  'once it is signed out they stop counting');

-- ------------------------------------------------------------ a code written without a session
select tests.clear_authentication();
insert into app_private.list_invites (list_id, role, code_sha256, created_by, expires_at)
values ('f7000000-0000-4000-8000-000000000002', 'editor', sha256(convert_to('code-by-the-owner-role', 'UTF8')),
        tests.get_supabase_uid('follow_carol'), now() + interval '1 day');
select tests.authenticate_as('follow_mallory');
select lives_ok($$ select public.accept_list_invite('code-by-the-owner-role') $$,
  'a code written without a session (the table''s owner, or before the migration) follows its creator''s rule alone');

select * from finish();
rollback;

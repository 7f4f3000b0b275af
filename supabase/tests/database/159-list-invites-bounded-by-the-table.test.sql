-- The bounds of invites hold for every write of app_private.list_invites, not
-- only for public.create_list_invite (migration 20261128005000). authenticated
-- may insert into the table itself (the security invoker rpc needs it), and
-- that insert took any expires_at (an invite valid 100 years) and any number
-- of pending invites; and through the rpc alone, the codes of a signed-out
-- session stopped counting but stayed, so signing in again let an owner pile
-- up another 100 rows as often as they could sign in. Now a trigger refuses a
-- validity outside app_private.invite_validity_bounds() (23514, constraint
-- list_invites_validity_bounded) on every insert and update, and another
-- refuses a list's 101st open invite (23514, constraint
-- max_pending_invites_per_list) after withdrawing the list's codes that no
-- longer work. Calls as PostgREST makes them (role authenticated +
-- request.jwt.claims), per role.
begin;
select plan(35);

select from unnest(array['bound_owner', 'bound_editor', 'bound_viewer', 'bound_stranger']) name,
  lateral tests.create_supabase_user(name);

select tests.authenticate_as('bound_owner');
insert into public.lists (id, title) values ('f5900000-0000-4000-8000-000000000001', 'Bounded');
insert into public.lists (id, title) values ('f5900000-0000-4000-8000-000000000002', 'Roomy');
select tests.clear_authentication();
insert into public.list_members (list_id, user_id, role) values
  ('f5900000-0000-4000-8000-000000000001', tests.get_supabase_uid('bound_editor'), 'editor'),
  ('f5900000-0000-4000-8000-000000000001', tests.get_supabase_uid('bound_viewer'), 'viewer');

-- A direct insert of an invite to list 1 valid p_valid, with a fresh code.
create function pg_temp.insert_invite(p_valid interval, p_list uuid default 'f5900000-0000-4000-8000-000000000001') returns void language sql as $$
  insert into app_private.list_invites (list_id, role, code_sha256, expires_at)
  values (p_list, 'owner', sha256(convert_to(gen_random_uuid()::text, 'UTF8')), now() + p_valid)
$$;
create function pg_temp.open_invites(p_list uuid default 'f5900000-0000-4000-8000-000000000001') returns integer language sql as $$
  select count(*)::integer from app_private.list_invites where list_id = p_list and used_at is null and expires_at > now()
$$;

-- ------------------------------------------------------------ validity, per role
select tests.authenticate_as('bound_owner');
select throws_ok($$ select pg_temp.insert_invite(interval '100 years') $$,
  '23514', 'an invite must expire between 1 minute and 30 days after it is created',
  'owner: a direct insert of an invite valid 100 years is refused, saying why');
select throws_ok($$ select pg_temp.insert_invite(interval '30 days 1 second') $$,
  '23514', null, 'owner: so is one valid a second more than 30 days');
select throws_ok($$ select pg_temp.insert_invite(interval '59 seconds') $$,
  '23514', null, 'owner: and one valid less than a minute (the cap counts only open invites)');
select lives_ok($$ select pg_temp.insert_invite(interval '30 days') $$, 'owner: one valid 30 days is inserted');
select throws_ok($$ select public.create_list_invite('f5900000-0000-4000-8000-000000000001', 'viewer', interval '100 years') $$,
  '22023', 'p_valid_for must be between 1 minute and 30 days', 'owner: the rpc still answers 22023 for its parameter');

select tests.authenticate_as('bound_editor');
select throws_ok($$ select pg_temp.insert_invite(interval '1 day') $$, '42501', null, 'editor: no direct insert');
select tests.authenticate_as('bound_viewer');
select throws_ok($$ select pg_temp.insert_invite(interval '1 day') $$, '42501', null, 'viewer: no direct insert');
select tests.authenticate_as('bound_stranger');
select throws_ok($$ select pg_temp.insert_invite(interval '1 day') $$, '42501', null, 'non-member: no direct insert');
select tests.authenticate_as_anon();
select throws_ok($$ select pg_temp.insert_invite(interval '1 day') $$, '42501', null, 'anon: no direct insert');
select throws_ok($$ select public.create_list_invite('f5900000-0000-4000-8000-000000000001') $$, '42501', null, 'anon: no rpc');
select tests.authenticate_as_service_role();
select throws_ok($$ select pg_temp.insert_invite(interval '1 day') $$, '42501', null, 'service_role: no direct insert');
select throws_ok($$ select public.create_list_invite('f5900000-0000-4000-8000-000000000001') $$, '42501', null, 'service_role: no rpc');

-- The table's owner (here the connecting superuser) is bound too, on insert and update.
select tests.clear_authentication();
select throws_ok($$ select pg_temp.insert_invite(interval '100 years') $$, '23514', null, 'the table''s owner: no invite valid 100 years either');
select throws_ok($$ update app_private.list_invites set expires_at = created_at + interval '100 years'
                     where list_id = 'f5900000-0000-4000-8000-000000000001' $$,
  '23514', 'an invite must expire between 1 minute and 30 days after it is created', 'nor an update that extends one to 100 years');
select throws_ok($$ update app_private.list_invites set created_at = created_at - interval '1 day'
                     where list_id = 'f5900000-0000-4000-8000-000000000001' $$,
  '23514', null, 'nor one that moves its creation back past 30 days');
select is((select count(*)::integer from app_private.list_invites
            where list_id = 'f5900000-0000-4000-8000-000000000001' and expires_at - created_at > interval '30 days'),
  0, 'no invite to the list is valid more than 30 days');

-- ------------------------------------------------------------ the cap, per role
select tests.authenticate_as('bound_owner');
select lives_ok($$ select public.create_list_invite('f5900000-0000-4000-8000-000000000001', 'viewer') from generate_series(1, 99) $$,
  'owner: 99 more invites through the rpc (100 open)');
select throws_ok($$ select pg_temp.insert_invite(interval '1 day') $$,
  '23514', 'a list has at most 100 pending invites; they stop counting once used or expired, and those of a former owner, or of one who cannot sign in, do not count',
  'owner: a direct insert of the 101st open invite is refused as the rpc refuses it');
select throws_ok($$ select public.create_list_invite('f5900000-0000-4000-8000-000000000001', 'viewer') $$,
  '23514', null, 'owner: so is the rpc''s 101st');
select lives_ok($$ select pg_temp.insert_invite(interval '1 day', 'f5900000-0000-4000-8000-000000000002') $$,
  'owner: another list has its own cap');
select tests.authenticate_as('bound_editor');
select throws_ok($$ select pg_temp.insert_invite(interval '1 day') $$, '42501', null,
  'editor: refused as before, full list or not (the cap tells nothing of the list)');
select tests.authenticate_as('bound_viewer');
select throws_ok($$ select pg_temp.insert_invite(interval '1 day') $$, '42501', null, 'viewer: likewise');
select tests.authenticate_as('bound_stranger');
select throws_ok($$ select pg_temp.insert_invite(interval '1 day') $$, '42501', null, 'non-member: likewise');

select tests.clear_authentication();
select throws_ok($$ select pg_temp.insert_invite(interval '1 day') $$, '23514', null, 'the table''s owner: no 101st open invite either');
select throws_ok($$ insert into app_private.list_invites (list_id, role, code_sha256, created_by, expires_at)
                    select 'f5900000-0000-4000-8000-000000000002', 'viewer', sha256(convert_to('many' || n, 'UTF8')),
                           tests.get_supabase_uid('bound_owner'), now() + interval '1 day'
                      from generate_series(1, 100) n $$,
  '23514', null, 'nor 100 more to a list with one, in one statement');
update app_private.list_invites set used_at = now(), used_by = tests.get_supabase_uid('bound_stranger')
 where id = (select min(id::text)::uuid from app_private.list_invites where list_id = 'f5900000-0000-4000-8000-000000000001');
select tests.authenticate_as('bound_owner');
select lives_ok($$ select public.create_list_invite('f5900000-0000-4000-8000-000000000001', 'viewer') $$, 'a used invite frees its place');
select tests.clear_authentication();
select throws_ok($$ update app_private.list_invites set used_at = null, used_by = null
                     where list_id = 'f5900000-0000-4000-8000-000000000001' and used_at is not null $$,
  '23514', null, 'an update that reopens a used invite of a full list is refused');
select is(pg_temp.open_invites(), 100, 'the list has 100 open invites');

-- ------------------------------------------------------------ signing in again makes no room for more rows
-- The owner's session is signed out: its 100 codes no longer work. Signed in
-- again, the owner may invite again, and the dead codes make way.
delete from auth.sessions where user_id = tests.get_supabase_uid('bound_owner');
insert into auth.sessions (id, user_id, aal, created_at, updated_at, user_agent)
values ('f5910000-0000-4000-8000-000000000001', tests.get_supabase_uid('bound_owner'), 'aal1', now(), now(), 'signed in again');
select tests.authenticate_as('bound_owner');
select lives_ok($$ select public.create_list_invite('f5900000-0000-4000-8000-000000000001', 'viewer') from generate_series(1, 100) $$,
  'signed in again, the owner creates 100 invites');
select tests.clear_authentication();
select is(pg_temp.open_invites(), 100, 'and the list still has 100 open invites, not 200');
select is((select count(*)::integer from app_private.list_invites
            where list_id = 'f5900000-0000-4000-8000-000000000001' and used_at is null
              and created_session is distinct from 'f5910000-0000-4000-8000-000000000001'),
  0, 'the signed-out session''s dead codes were withdrawn to make room');
select tests.authenticate_as('bound_owner');
select throws_ok($$ select public.create_list_invite('f5900000-0000-4000-8000-000000000001', 'viewer') $$,
  '23514', null, 'and the 101st live one is still refused');
select tests.clear_authentication();
select is((select count(*)::integer from app_private.list_invites where list_id = 'f5900000-0000-4000-8000-000000000001' and used_at is not null),
  1, 'the used invite stays (who joined), as the purge keeps it');

-- ------------------------------------------------------------ one source of truth
select results_eq($$ select shortest, longest, described from app_private.invite_validity_bounds() $$,
  $$ values (interval '1 minute', interval '30 days', 'between 1 minute and 30 days') $$,
  'the bounds of an invite''s validity, and their words, are in app_private.invite_validity_bounds()');
select is(tests.function_callers('app_private.invite_validity_bounds()'), array['authenticated'],
  'invite_validity_bounds: only authenticated calls it (the rpc runs as its caller)');

select * from finish();
rollback;

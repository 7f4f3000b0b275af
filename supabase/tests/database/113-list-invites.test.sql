-- Sharing by invite code: app_private.list_invites (RLS, exact policy
-- names, grants: the code's hash is never readable), public.create_list_invite
-- (owners only) and public.accept_list_invite (joins with the invite's role;
-- wrong, used and expired codes, and codes whose creator is no longer an
-- owner, fail alike; a code is read trimmed and lower-cased, and an accept
-- that changes nothing leaves it unused), and what anon may call.
begin;
select plan(46);

select from tests.create_supabase_user('invites_owner');
select from tests.create_supabase_user('invites_editor');
select from tests.create_supabase_user('invites_viewer');
select from tests.create_supabase_user('invites_stranger');
select from tests.create_supabase_user('invites_newcomer');
select from tests.create_supabase_user('invites_typist');

-- ------------------------------------------------------------ structure
select ok((select relrowsecurity from pg_class where oid = 'app_private.list_invites'::regclass), 'RLS is enabled on app_private.list_invites');
select policies_are('app_private', 'list_invites', array[
  'Owners can read the invites of their lists',
  'Owners can create invites to their lists',
  'Owners can withdraw the invites of their lists'
], 'list_invites has exactly its three policies (no update: redeeming goes through accept_list_invite)');
select table_privs_are('app_private', 'list_invites', 'authenticated', array['DELETE'],
  'authenticated deletes invites at table level; reads and inserts are per column');
select ok(not has_column_privilege('authenticated', 'app_private.list_invites', 'code_sha256', 'SELECT'),
  'authenticated cannot read the code''s hash');
select is(array(select c from unnest(array['id', 'list_id', 'role', 'code_sha256', 'created_by', 'created_at', 'expires_at', 'used_at', 'used_by']) c
                where has_column_privilege('authenticated', 'app_private.list_invites', c, 'INSERT')),
  array['list_id', 'role', 'code_sha256', 'expires_at'], 'authenticated cannot insert created_by, used_at or used_by');
select table_privs_are('app_private', 'list_invites', 'anon', '{}'::text[], 'anon has no privilege on list_invites');
select table_privs_are('app_private', 'list_invites', 'service_role', '{}'::text[], 'service_role has no privilege on list_invites');
select is((select array_agg(column_name::text order by column_name) from information_schema.columns
            where table_schema = 'app_private' and table_name = 'list_invites' and data_type in ('text', 'character varying')),
  array['role'], 'the only text column of an invite is its role: no column could hold the code');

select tests.authenticate_as('invites_owner');
insert into public.lists (id, title) values ('f1000000-0000-4000-8000-000000000001', 'Shared');
select tests.clear_authentication();
insert into public.list_members (list_id, user_id, role) values
  ('f1000000-0000-4000-8000-000000000001', tests.get_supabase_uid('invites_editor'), 'editor'),
  ('f1000000-0000-4000-8000-000000000001', tests.get_supabase_uid('invites_viewer'), 'viewer');

-- ------------------------------------------------------------ creating (owners only)
select tests.authenticate_as('invites_owner');
select from set_config('tests.viewer_code', public.create_list_invite('f1000000-0000-4000-8000-000000000001', 'viewer'), true);
select from set_config('tests.editor_code', public.create_list_invite('f1000000-0000-4000-8000-000000000001'), true);
select matches(current_setting('tests.viewer_code'), '^[0-9a-f]{64}$', 'an owner gets a 64-hex-character code');
select isnt(current_setting('tests.viewer_code'), current_setting('tests.editor_code'), 'every invite has its own code');
select results_eq($$ select role, used_at is null, expires_at - created_at from app_private.list_invites where list_id = 'f1000000-0000-4000-8000-000000000001' order by role $$,
  $$ values ('editor'::text, true, interval '7 days'), ('viewer'::text, true, interval '7 days') $$,
  'the owner reads the list''s pending invites (editor by default, valid 7 days)');
select throws_ok($$ select public.create_list_invite('f1000000-0000-4000-8000-000000000001', 'viewer', interval '31 days') $$,
  '22023', null, 'an invite is valid for at most 30 days');
select throws_ok($$ select public.create_list_invite('f1000000-0000-4000-8000-000000000001', 'admin') $$,
  '22023', 'p_role must be owner, editor or viewer', 'an invite''s role is owner, editor or viewer');
select throws_ok($$ select public.create_list_invite('f1000000-0000-4000-8000-000000000001', 'Owner') $$,
  '22023', 'p_role must be owner, editor or viewer', 'spelled exactly so');
select throws_ok($$ select public.create_list_invite('f1000000-0000-4000-8000-000000000001', null) $$,
  '22023', 'p_role must be owner, editor or viewer', 'and given');

select tests.clear_authentication();
select results_eq($$ select count(*)::int from app_private.list_invites where list_id = 'f1000000-0000-4000-8000-000000000001'
                    and code_sha256 in (sha256(convert_to(current_setting('tests.viewer_code'), 'UTF8')), sha256(convert_to(current_setting('tests.editor_code'), 'UTF8'))) $$,
  array[2], 'only the SHA-256 of each code is stored');
select is_empty($$ select 1 from app_private.list_invites i
                   where strpos(to_jsonb(i)::text, current_setting('tests.viewer_code')) > 0 or strpos(to_jsonb(i)::text, current_setting('tests.editor_code')) > 0 $$,
  'no stored invite contains a code');

select tests.authenticate_as('invites_editor');
select throws_ok($$ select public.create_list_invite('f1000000-0000-4000-8000-000000000001', 'viewer') $$,
  '42501', 'no such list, or you are not its owner', 'an editor cannot invite');
select is_empty($$ select 1 from app_private.list_invites $$, 'an editor does not see the list''s invites');
select results_eq($$ with d as (delete from app_private.list_invites returning 1) select count(*)::int from d $$, array[0], 'an editor cannot withdraw invites');
select tests.authenticate_as('invites_viewer');
select throws_ok($$ select public.create_list_invite('f1000000-0000-4000-8000-000000000001', 'owner') $$,
  '42501', 'no such list, or you are not its owner', 'a viewer cannot invite');
select tests.authenticate_as('invites_stranger');
select throws_ok($$ select public.create_list_invite('f1000000-0000-4000-8000-000000000001', 'editor') $$,
  '42501', 'no such list, or you are not its owner', 'a non-member cannot invite');
select throws_ok($$ select public.create_list_invite('f1000000-0000-4000-8000-0000000000ff', 'editor') $$,
  '42501', 'no such list, or you are not its owner', 'a list that does not exist gets the same answer');
select throws_ok($$ insert into app_private.list_invites (list_id, role, code_sha256, expires_at)
                    values ('f1000000-0000-4000-8000-000000000001', 'owner', sha256('chosen'::bytea), now() + interval '1 day') $$,
  '42501', null, 'a non-member cannot insert an invite with a code of their choosing');

-- ------------------------------------------------------------ accepting
select tests.authenticate_as('invites_newcomer');
select is(public.accept_list_invite(current_setting('tests.viewer_code')), 'f1000000-0000-4000-8000-000000000001'::uuid,
  'accepting returns the list id');
select results_eq($$ select role from public.list_members where list_id = 'f1000000-0000-4000-8000-000000000001' and user_id = (select auth.uid()) $$,
  array['viewer'], 'the invitee is a member with the invite''s role');
select results_eq($$ select title from public.lists where id = 'f1000000-0000-4000-8000-000000000001' $$, array['Shared'], 'and now sees the list');

select tests.authenticate_as('invites_stranger');
select throws_ok(format('select public.accept_list_invite(%L)', current_setting('tests.viewer_code')),
  'P0002', 'this invite code is not valid (wrong, already used or expired)', 'a used code fails');
select throws_ok($$ select public.accept_list_invite(repeat('0', 64)) $$,
  'P0002', 'this invite code is not valid (wrong, already used or expired)', 'a wrong code fails alike');
select throws_ok($$ select public.accept_list_invite(null) $$,
  'P0002', 'this invite code is not valid (wrong, already used or expired)', 'no code fails alike');
select tests.clear_authentication();
update app_private.list_invites set created_at = now() - interval '8 days', expires_at = now() - interval '1 day'
 where code_sha256 = sha256(convert_to(current_setting('tests.editor_code'), 'UTF8'));
select tests.authenticate_as('invites_stranger');
select throws_ok(format('select public.accept_list_invite(%L)', current_setting('tests.editor_code')),
  'P0002', 'this invite code is not valid (wrong, already used or expired)', 'an expired code fails alike');
select is_empty($$ select 1 from public.lists where id = 'f1000000-0000-4000-8000-000000000001' $$, 'the failed attempts made nobody a member');

-- A member accepting an invite keeps the better role.
select tests.authenticate_as('invites_owner');
select from set_config('tests.owner_code', public.create_list_invite('f1000000-0000-4000-8000-000000000001', 'owner'), true);
select from set_config('tests.viewer_code2', public.create_list_invite('f1000000-0000-4000-8000-000000000001', 'viewer'), true);
select tests.authenticate_as('invites_editor');
select is(public.accept_list_invite(current_setting('tests.viewer_code2')), 'f1000000-0000-4000-8000-000000000001'::uuid, 'an editor accepts a viewer invite');
select tests.clear_authentication();
select results_eq(format('select used_at is null from app_private.list_invites where code_sha256 = sha256(convert_to(%L, %L))', current_setting('tests.viewer_code2'), 'UTF8'),
  array[true], 'which changes nothing and leaves the code unused, for its invitee');
select tests.authenticate_as('invites_editor');
select lives_ok(format('select public.accept_list_invite(%L)', current_setting('tests.owner_code')), 'and then an owner invite');
select results_eq($$ select role from public.list_members where list_id = 'f1000000-0000-4000-8000-000000000001' and user_id = (select auth.uid()) $$,
  array['owner'], 'a viewer invite never demotes; an owner invite promotes');

select tests.authenticate_as('invites_owner');
select results_eq($$ select count(*)::int from app_private.list_invites where used_at is not null $$, array[2], 'the owner sees which invites were used');
select results_eq($$ with d as (delete from app_private.list_invites where used_at is null returning 1) select count(*)::int from d $$,
  array[2], 'the owner withdraws pending invites (the expired one, the viewer one the editor left)');

-- An invite counts only while its creator is an owner of the list: once
-- demoted or removed, the codes they created fail like wrong ones (a removed
-- owner cannot let themselves back in).
select tests.authenticate_as('invites_editor'); -- an owner since the owner invite above
select from set_config('tests.stale_owner_code', public.create_list_invite('f1000000-0000-4000-8000-000000000001', 'owner'), true);
select from set_config('tests.stale_viewer_code', public.create_list_invite('f1000000-0000-4000-8000-000000000001', 'viewer'), true);
select tests.authenticate_as('invites_owner');
update public.list_members set role = 'editor' where list_id = 'f1000000-0000-4000-8000-000000000001' and user_id = tests.get_supabase_uid('invites_editor');
select tests.authenticate_as('invites_stranger');
select throws_ok(format('select public.accept_list_invite(%L)', current_setting('tests.stale_viewer_code')),
  'P0002', 'this invite code is not valid (wrong, already used or expired)', 'a code whose creator was since demoted fails like a wrong one');
select tests.authenticate_as('invites_owner');
delete from public.list_members where list_id = 'f1000000-0000-4000-8000-000000000001' and user_id = tests.get_supabase_uid('invites_editor');
select tests.authenticate_as('invites_editor');
select throws_ok(format('select public.accept_list_invite(%L)', current_setting('tests.stale_owner_code')),
  'P0002', 'this invite code is not valid (wrong, already used or expired)', 'a removed owner cannot rejoin with a code they created before');
select tests.clear_authentication();
select is_empty(format('select 1 from public.list_members where list_id = %L and user_id = %L', 'f1000000-0000-4000-8000-000000000001', tests.get_supabase_uid('invites_editor')),
  'the removed owner stays out');
select tests.authenticate_as('invites_owner');
select from set_config('tests.fresh_code', public.create_list_invite('f1000000-0000-4000-8000-000000000001', 'viewer'), true);
select tests.authenticate_as('invites_stranger');
select lives_ok(format('select public.accept_list_invite(%L)', current_setting('tests.fresh_code')), 'a code of an owner still in place works');

-- A code typed in capitals, or pasted with whitespace around it, is the same code.
select tests.authenticate_as('invites_owner');
select from set_config('tests.typed_code', public.create_list_invite('f1000000-0000-4000-8000-000000000001', 'editor'), true);
select tests.authenticate_as('invites_typist');
select is(public.accept_list_invite(E' \t' || upper(current_setting('tests.typed_code')) || E'\n'), 'f1000000-0000-4000-8000-000000000001'::uuid,
  'a code in capitals with surrounding whitespace is accepted');
select results_eq($$ select role from public.list_members where list_id = 'f1000000-0000-4000-8000-000000000001' and user_id = (select auth.uid()) $$,
  array['editor'], 'with the invite''s role');

-- ------------------------------------------------------------ anon
select tests.authenticate_as_anon();
select throws_ok($$ select public.create_list_invite('f1000000-0000-4000-8000-000000000001') $$, '42501', null, 'anon cannot create invites');
select throws_ok($$ select public.accept_list_invite(repeat('0', 64)) $$, '42501', null, 'anon cannot accept invites');

select * from finish();
rollback;

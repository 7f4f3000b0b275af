-- docs/security-model.md, "Anonymous users": an anonymous user (the token's
-- is_anonymous: true) is a user like any other, and an app that wants them to
-- do less adds a restrictive policy on the claim. The policy the docs show
-- does what they say: anonymous users create no invite codes, signed-up ones
-- still do. Calls as PostgREST makes them (role authenticated +
-- request.jwt.claims).
begin;
select plan(4);

select from unnest(array['anon_owner', 'signed_up_owner']) name, lateral tests.create_supabase_user(name);
update auth.users set is_anonymous = true, email = null where id = tests.get_supabase_uid('anon_owner');

-- tests.authenticate_as, with the claim Supabase Auth gives an anonymous user's token.
create function pg_temp.authenticate_anonymously_as(p_who text) returns void language plpgsql as $$
begin
  perform tests.authenticate_as(p_who);
  perform set_config('request.jwt.claims',
    jsonb_set(current_setting('request.jwt.claims')::jsonb, '{is_anonymous}', 'true')::text, true);
end;
$$;

select pg_temp.authenticate_anonymously_as('anon_owner');
select is(length(public.create_list_invite(tests.get_supabase_uid('anon_owner'), 'editor')), 64,
  'without the app''s policy, an anonymous user creates invite codes like any user');
select tests.clear_authentication();

-- The docs' policy, as an app's migration adds it.
create policy "Anonymous users create no invites" on app_private.list_invites
  as restrictive for insert to authenticated
  with check (not coalesce((select (auth.jwt() ->> 'is_anonymous')::boolean), false));

select pg_temp.authenticate_anonymously_as('anon_owner');
select throws_ok($$ select public.create_list_invite(tests.get_supabase_uid('anon_owner'), 'editor') $$,
  '42501', null, 'with it, an anonymous user''s invite is refused');
select is((select count(*)::int from app_private.list_invites where list_id = tests.get_supabase_uid('anon_owner')), 1,
  'and nothing is written: the list keeps the one code made before the policy');
select tests.clear_authentication();

select tests.authenticate_as('signed_up_owner');
select is(length(public.create_list_invite(tests.get_supabase_uid('signed_up_owner'), 'editor')), 64,
  'a signed-up user still creates invite codes');
select tests.clear_authentication();

select * from finish();
rollback;

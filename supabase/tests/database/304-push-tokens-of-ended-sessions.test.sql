-- Push tokens go with the session that used them (migration 20261127000120):
-- a ban releases the user's tokens at once, the sweep releases those of
-- sessions past not_after; who may run what.
begin;
select plan(7);

select from tests.create_supabase_user('ended_banned');
select from tests.create_supabase_user('ended_expired');
select from tests.create_supabase_user('ended_live');
insert into app_private.devices (user_id, installation_id, platform, app_version, build_number, push_token, push_provider, session_id)
select tests.get_supabase_uid(name), gen_random_uuid(), 'ios', '1.0.0', 1, 'token-' || name, 'apns', tests.get_session_id(name)
  from unnest(array['ended_banned', 'ended_expired', 'ended_live']) name;
create function pg_temp.token_of(p_name text) returns text language sql as $$
  select push_token from app_private.devices where user_id = tests.get_supabase_uid(p_name) $$;

select is(tests.function_callers('app_private.release_ended_push_tokens(uuid)'), '{}'::text[],
  'release_ended_push_tokens(): no API role may run it (the ban trigger does)');
select is(tests.function_callers('app_private.release_expired_push_tokens()'), array['service_role'],
  'release_expired_push_tokens(): the service role (or pg_cron) runs the sweep');

update auth.users set banned_until = now() + interval '1 day' where id = tests.get_supabase_uid('ended_banned');
select is(pg_temp.token_of('ended_banned'), null, 'a ban releases the user''s push tokens at once');
select isnt(pg_temp.token_of('ended_live'), null, 'another user''s token stays');

update auth.sessions set not_after = now() - interval '1 minute' where id = tests.get_session_id('ended_expired');
select isnt(pg_temp.token_of('ended_expired'), null, 'a session passes not_after with no write: its token stays until the sweep');
select is(app_private.release_expired_push_tokens(), 1, 'the sweep releases the expired session''s token, and only that one');
select results_eq($$ select pg_temp.token_of('ended_expired') is null, pg_temp.token_of('ended_live') is not null $$,
  $$ values (true, true) $$, 'the live session keeps its token');

select * from finish();
rollback;

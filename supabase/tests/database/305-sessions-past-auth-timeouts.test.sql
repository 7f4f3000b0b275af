-- A session past Supabase Auth's time-box or inactivity timeout no longer
-- counts, by the rule of Session.CheckValidity (migration 20261127001860):
-- the time-box from created_at, the inactivity timeout from refreshed_at
-- (UTC, without time zone; created_at while never refreshed). Both are off by
-- default; a project turns them on by replacing the two setting functions.
begin;
select plan(12);
set local timezone = 'America/Los_Angeles';

select from unnest(array['idle_refreshed', 'idle_never_refreshed', 'idle_recent', 'boxed_old', 'boxed_new']) name,
  lateral tests.create_supabase_user(name);
insert into app_private.devices (user_id, installation_id, platform, app_version, build_number, push_token, push_provider, session_id)
select tests.get_supabase_uid(name), gen_random_uuid(), 'ios', '1.0.0', 1, 'token-' || name, 'apns', tests.get_session_id(name)
  from unnest(array['idle_refreshed', 'idle_never_refreshed', 'idle_recent', 'boxed_old', 'boxed_new']) name;
create function pg_temp.live(p_name text) returns boolean language sql as $$
  select app_private.session_is_live(tests.get_session_id(p_name), tests.get_supabase_uid(p_name)) $$;
create function pg_temp.pushed(p_name text) returns boolean language sql as $$
  select exists (select 1 from app_private.push_targets where user_id = tests.get_supabase_uid(p_name)) $$;

-- Auth writes refreshed_at in UTC into a timestamp without time zone.
update auth.sessions set created_at = now() - interval '1 year', refreshed_at = (now() - interval '2 days') at time zone 'UTC'
 where id = tests.get_session_id('idle_refreshed');
update auth.sessions set created_at = now() - interval '2 days', refreshed_at = null
 where id = tests.get_session_id('idle_never_refreshed');
update auth.sessions set created_at = now() - interval '1 year', refreshed_at = (now() - interval '2 hours') at time zone 'UTC'
 where id = tests.get_session_id('idle_recent');
update auth.sessions set created_at = now() - interval '31 days', refreshed_at = (now() - interval '1 minute') at time zone 'UTC'
 where id = tests.get_session_id('boxed_old');
update auth.sessions set created_at = now() - interval '29 days', refreshed_at = (now() - interval '1 minute') at time zone 'UTC'
 where id = tests.get_session_id('boxed_new');

select ok(pg_temp.live('idle_refreshed') and pg_temp.live('idle_never_refreshed') and pg_temp.live('boxed_old'),
  'both settings off (Supabase''s default): old and idle sessions count');
select ok(app_private.release_expired_push_tokens() >= 0 and pg_temp.pushed('idle_refreshed') and pg_temp.pushed('boxed_old'),
  'and the sweep keeps their tokens');
select is(tests.function_callers('app_private.session_has_ended(timestamptz, timestamptz, timestamp)'), '{}'::text[],
  'session_has_ended(): no API role runs it (session_is_live and the sweep do)');

create or replace function app_private.auth_sessions_inactivity_timeout() returns interval
language sql stable set search_path = '' as $$ select interval '1 day' $$;
select ok(not pg_temp.live('idle_refreshed'), 'inactivity timeout 1 day: refreshed 2 days ago no longer counts');
select ok(not pg_temp.live('idle_never_refreshed'), 'never refreshed, created 2 days ago: timed out from created_at');
select ok(pg_temp.live('idle_recent'), 'refreshed 2 hours ago (stored in UTC, read in any time zone) counts, however old the session');
select ok(not pg_temp.pushed('idle_refreshed') and pg_temp.pushed('idle_recent'), 'a timed-out session is no push target');

create or replace function app_private.auth_sessions_inactivity_timeout() returns interval
language sql stable set search_path = '' as $$ select null::interval $$;
create or replace function app_private.auth_sessions_timebox() returns interval
language sql stable set search_path = '' as $$ select interval '30 days' $$;
select ok(not pg_temp.live('boxed_old'), 'time-box 30 days: a session created 31 days ago no longer counts, though refreshed a minute ago');
select ok(pg_temp.live('boxed_new'), 'created 29 days ago it counts');
select ok(pg_temp.live('idle_recent') is false and pg_temp.live('idle_never_refreshed'), 'the time-box counts from created_at only');

create or replace function app_private.auth_sessions_inactivity_timeout() returns interval
language sql stable set search_path = '' as $$ select interval '1 day' $$;
select cmp_ok(app_private.release_expired_push_tokens(), '>=', 4, 'the sweep releases the tokens of the timed-out and time-boxed sessions (and the sample data''s old ones)');
select results_eq($$ select user_id from app_private.devices where push_token is not null and user_id in
                     (select tests.get_supabase_uid(n) from unnest(array['idle_refreshed', 'idle_never_refreshed', 'idle_recent', 'boxed_old', 'boxed_new']) n) $$,
  $$ select tests.get_supabase_uid('boxed_new') $$, 'only the session that still counts keeps its token');

select * from finish();
rollback;

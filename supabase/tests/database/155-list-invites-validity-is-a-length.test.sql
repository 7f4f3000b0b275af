-- create_list_invite judges p_valid_for by its length and adds that same
-- length (migration 20261128004600). It compared the interval (a month
-- counting 30 days) but added calendar months: a mix of months and days
-- passed the check with a very different real validity. On 2026-11-28
-- '-1 mon 31 days 1 microsecond' passed as 1 day and expired after 1
-- microsecond (outside the cap of pending invites at once), and
-- '1200 mons -35970 days' stored an invite valid 554 days. Now the length is
-- extract(epoch from p_valid_for) (a month 30 days, a year 365.25 days, a day
-- 24 hours), the same on every date and in every time zone.
begin;
select plan(13);

select from tests.create_supabase_user('validity_length_owner');

select tests.authenticate_as('validity_length_owner');
insert into public.lists (id, title) values ('f5500000-0000-4000-8000-000000000001', 'Lengths');

-- Real validity 1 microsecond on any date up to 2096 (48 months are 1461 days);
-- it compared as 21 days.
select throws_ok($$ select public.create_list_invite('f5500000-0000-4000-8000-000000000001', 'viewer', interval '-48 mons 1461 days 1 microsecond') $$,
  '22023', 'p_valid_for must be between 1 minute and 30 days', 'four years back and their 1461 days on: 1 microsecond, refused');
select throws_ok($$ select public.create_list_invite('f5500000-0000-4000-8000-000000000001', 'viewer', interval '1200 mons -35970 days') $$,
  '22023', 'p_valid_for must be between 1 minute and 30 days', 'a century less 35970 days (compared as 30 days, 555 long) is refused');
select throws_ok($$ select public.create_list_invite('f5500000-0000-4000-8000-000000000001', 'viewer', interval '120000 mons -3599970 days') $$,
  '22023', 'p_valid_for must be between 1 minute and 30 days', 'so are ten millennia less 3599970 days');
select throws_ok($$ select public.create_list_invite('f5500000-0000-4000-8000-000000000001', 'viewer', interval '3600000 mons -107999970 days') $$,
  '22023', 'p_valid_for must be between 1 minute and 30 days', 'one whose months alone overflow a timestamp gets the same answer');
select throws_ok($$ select public.create_list_invite('f5500000-0000-4000-8000-000000000001', 'viewer', interval '1 year') $$,
  '22023', 'p_valid_for must be between 1 minute and 30 days', 'a year is 365.25 days: refused');

select lives_ok($$ select public.create_list_invite('f5500000-0000-4000-8000-000000000001', 'viewer', interval '-1 mon 31 days 1 microsecond') $$,
  'a month back and 31 days on is accepted');
select lives_ok($$ select public.create_list_invite('f5500000-0000-4000-8000-000000000001', 'viewer', interval '1 mon') $$,
  'a month is accepted');
select lives_ok($$ select public.create_list_invite('f5500000-0000-4000-8000-000000000001', 'viewer', interval '29 days 24:00:00') $$,
  '29 days and 24 hours are accepted');
select lives_ok($$ select public.create_list_invite('f5500000-0000-4000-8000-000000000001', 'viewer', interval '1 day -23:59:00') $$,
  'a day less 23 hours 59 minutes is accepted');
-- Where the clocks change: a day added to a timestamptz follows the session's
-- time zone (23 or 25 hours over a change; PostgREST takes one per request).
set local timezone = 'Europe/Berlin';
select lives_ok($$ select public.create_list_invite('f5500000-0000-4000-8000-000000000001', 'viewer', interval '30 days') $$,
  '30 days are accepted in a time zone with summer time');
select lives_ok($$ select public.create_list_invite('f5500000-0000-4000-8000-000000000001', 'viewer', interval '2 days -47:59:00') $$,
  'and 2 days less 47 hours 59 minutes');
reset timezone;
select tests.clear_authentication();

select results_eq(
  $$ select extract(epoch from expires_at - created_at) from app_private.list_invites where list_id = 'f5500000-0000-4000-8000-000000000001' order by 1 $$,
  $$ values (60.000000), (60.000000), (86400.000001), (2592000.000000), (2592000.000000), (2592000.000000) $$,
  'each accepted invite is valid for exactly the length that was checked: a minute twice, a day and a microsecond, 30 days three times');
select is((select count(*)::integer from app_private.list_invites
            where list_id = 'f5500000-0000-4000-8000-000000000001'
              and (expires_at - created_at < interval '1 minute' or expires_at - created_at > interval '30 days')),
  0, 'no invite is valid less than a minute or more than 30 days');

select * from finish();
rollback;

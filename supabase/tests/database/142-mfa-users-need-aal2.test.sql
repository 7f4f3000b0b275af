-- A user with a verified MFA factor is reached through the Data API only by a
-- session that completed MFA: an aal1 session (auth.sessions.aal: Supabase
-- Auth's session after the password step, before the second factor's) sees
-- and writes nothing (app_private.session_standing, through session_is_live
-- and live_uid(); migration 20261128003350). The session row's aal decides,
-- not the token's aal claim. Users without a verified factor (none, or only an
-- unverified one) are reached at aal1 as before.
begin;
select plan(19);

select from unnest(array['mfa_mia', 'mfa_ned', 'mfa_una']) name, lateral tests.create_supabase_user(name);
insert into auth.mfa_factors (id, user_id, friendly_name, factor_type, status, created_at, updated_at, secret)
values ('f1420000-0000-4000-8000-000000000001', tests.get_supabase_uid('mfa_mia'), 'Mia''s phone', 'totp', 'verified', now(), now(), 'MIA-SECRET'),
       ('f1420000-0000-4000-8000-000000000002', tests.get_supabase_uid('mfa_una'), 'Una''s phone', 'totp', 'unverified', now(), now(), 'UNA-SECRET');

-- Each user's list, made while their session is aal2 (Mia's must be to make one).
update auth.sessions set aal = 'aal2' where user_id in (select tests.get_supabase_uid(n) from unnest(array['mfa_mia', 'mfa_ned', 'mfa_una']) n);
select tests.authenticate_as('mfa_mia');
insert into public.lists (id, title) values ('f1420000-0000-4000-8000-0000000000a1', 'Mia''s list');
insert into public.tasks (list_id, title) values ('f1420000-0000-4000-8000-0000000000a1', 'Mia''s task');
select tests.authenticate_as('mfa_ned');
insert into public.lists (id, title) values ('f1420000-0000-4000-8000-0000000000b1', 'Ned''s list');
select tests.authenticate_as('mfa_una');
insert into public.lists (id, title) values ('f1420000-0000-4000-8000-0000000000c1', 'Una''s list');
select tests.clear_authentication();
-- Now every session is the password step's.
update auth.sessions set aal = 'aal1' where user_id in (select tests.get_supabase_uid(n) from unnest(array['mfa_mia', 'mfa_ned', 'mfa_una']) n);

select is(app_private.session_standing(tests.get_session_id('mfa_mia'), tests.get_supabase_uid('mfa_mia')), 'aal2_required',
          'an aal1 session of a user with a verified factor: aal2_required');
select is(app_private.session_standing(tests.get_session_id('mfa_ned'), tests.get_supabase_uid('mfa_ned')), 'live',
          'an aal1 session of a user without a factor: live');
select is(app_private.session_standing(tests.get_session_id('mfa_una'), tests.get_supabase_uid('mfa_una')), 'live',
          'an aal1 session of a user with only an unverified factor: live');
select is(app_private.session_standing(gen_random_uuid(), tests.get_supabase_uid('mfa_mia')), 'signed_out',
          'no such session: signed_out');
select is(app_private.session_is_live(tests.get_session_id('mfa_mia'), tests.get_supabase_uid('mfa_mia')), false,
          'session_is_live: an aal1 session of a user with a verified factor does not count');

-- Mia's password step, through the Data API.
select tests.authenticate_as('mfa_mia');
select is(app_private.live_uid(), null, 'Mia at aal1: live_uid() is null');
select is((select count(*) from public.lists), 0::bigint, 'Mia at aal1 reads no list');
select is((select count(*) from public.tasks), 0::bigint, 'Mia at aal1 reads no task');
select is((select count(*) from public.profiles), 0::bigint, 'Mia at aal1 reads no profile');
select throws_ok($$insert into public.lists (title) values ('written with the password alone')$$, '42501', null,
                 'Mia at aal1 creates no list');
select is(app_private.may_receive_poke('tidesync:user:' || tests.get_supabase_uid('mfa_mia')), false,
          'Mia at aal1 joins no Realtime topic of hers');
-- The token's claim does not raise the session: aal2 in the claims, aal1 in the row.
select from set_config('request.jwt.claims', (current_setting('request.jwt.claims')::jsonb || '{"aal": "aal2"}')::text, true);
select is((select count(*) from public.lists), 0::bigint, 'a token claiming aal2 of an aal1 session reads nothing either');
select tests.clear_authentication();

-- Supabase Auth verified her factor in that session: the row is aal2, the token she held still says aal1.
update auth.sessions set aal = 'aal2' where id = tests.get_session_id('mfa_mia');
select tests.authenticate_as('mfa_mia');
select from set_config('request.jwt.claims', (current_setting('request.jwt.claims')::jsonb || '{"aal": "aal1"}')::text, true);
select is(app_private.live_uid(), tests.get_supabase_uid('mfa_mia'), 'Mia''s session at aal2: live_uid() is hers (the row decides, not the claim)');
select is((select array_agg(title order by title) from public.lists where title like 'Mia%'), array['Mia''s list'], 'Mia at aal2 reads her list');
select is((select count(*) from public.tasks), 1::bigint, 'Mia at aal2 reads her task');
select tests.clear_authentication();

-- Users without a verified factor, at aal1.
select tests.authenticate_as('mfa_ned');
select is((select array_agg(title order by title) from public.lists where title like 'Ned%'), array['Ned''s list'], 'Ned (no factor) at aal1 reads his list');
select tests.authenticate_as('mfa_una');
select is((select array_agg(title order by title) from public.lists where title like 'Una%'), array['Una''s list'], 'Una (unverified factor only) at aal1 reads her list');
-- Nobody learns of another user's standing.
select is(app_private.session_standing(tests.get_session_id('mfa_mia'), tests.get_supabase_uid('mfa_mia')), 'signed_out',
          'as authenticated, another user''s session answers signed_out');
select tests.clear_authentication();

select is(tests.function_callers('app_private.session_standing(uuid, uuid)'), array['authenticated', 'service_role'],
          'session_standing: authenticated and service_role only');

select * from finish();
rollback;

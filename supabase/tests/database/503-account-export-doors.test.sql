-- The export's two doors into Supabase Auth: app_private.my_account() and
-- my_sessions() answer only about the caller, only to authenticated.
begin;
select plan(7);

select from tests.create_supabase_user('export_alice');
select from tests.create_supabase_user('export_bob');

select ok(has_function_privilege('authenticated', 'app_private.my_account()', 'EXECUTE')
      and not has_function_privilege('anon', 'app_private.my_account()', 'EXECUTE')
      and not has_function_privilege('service_role', 'app_private.my_account()', 'EXECUTE'), 'only authenticated may call my_account()');
select ok(has_function_privilege('authenticated', 'app_private.my_sessions()', 'EXECUTE')
      and not has_function_privilege('anon', 'app_private.my_sessions()', 'EXECUTE')
      and not has_function_privilege('service_role', 'app_private.my_sessions()', 'EXECUTE'), 'only authenticated may call my_sessions()');

select tests.authenticate_as('export_alice');
select results_eq($$ select id from app_private.my_account() $$, $$ values (tests.get_supabase_uid('export_alice')) $$,
  'my_account() is the caller''s account only');
select results_eq($$ select id from app_private.my_sessions() $$, $$ values (tests.get_session_id('export_alice')) $$,
  'my_sessions() lists the caller''s sessions only');
select is((select count(*)::int from app_private.my_sessions() where id = tests.get_session_id('export_bob')), 0,
  'another user''s session is not listed');

select tests.authenticate_as_anon();
select throws_ok($$ select * from app_private.my_account() $$, '42501', null, 'anon cannot call my_account()');
select tests.clear_authentication();
select is((select count(*)::int from app_private.my_account()), 0, 'without a caller it answers nothing');

select * from finish();
rollback;

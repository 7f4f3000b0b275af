-- app_private.account_created_at() (migration 20261128003750): the caller's
-- own auth.users.created_at, which tells an account from an earlier one with
-- the same id (the pull cursor names it: docs/sync.md); never another user's;
-- callable by authenticated only.
begin;
select plan(4);

select from unnest(array['reborn', 'other']) name, lateral tests.create_supabase_user(name);
update auth.users set created_at = '2026-01-02 03:04:05.678901+00' where id = tests.get_supabase_uid('reborn');
update auth.users set created_at = '2025-06-07 08:09:10+00' where id = tests.get_supabase_uid('other');

select tests.authenticate_as('reborn');
select is(app_private.account_created_at(), '2026-01-02 03:04:05.678901+00'::timestamptz,
  'the caller reads their own account''s creation time, to the microsecond');
select tests.clear_authentication();

-- deleted and created again with the same id: another account, another time
create temp table reborn_id as select tests.get_supabase_uid('reborn') as id;
grant select on reborn_id to authenticated;
delete from auth.users where id = (select id from reborn_id);
insert into auth.users (id, email, created_at) select id, 'reborn-again@example.com', '2026-03-04 05:06:07+00' from reborn_id;
select from (select set_config('role', 'authenticated', true),
                    set_config('request.jwt.claims', json_build_object('sub', (select id from reborn_id), 'role', 'authenticated')::text, true)) s;
select is(app_private.account_created_at(), '2026-03-04 05:06:07+00'::timestamptz,
  'the account created again with that id reads its own creation time');
reset role;

select from (select set_config('request.jwt.claims', '', true), set_config('role', 'authenticated', true)) s;
select is(app_private.account_created_at(), null, 'without a caller: null, nobody''s');
reset role;

select is(tests.function_callers('app_private.account_created_at()'), array['authenticated'], 'authenticated only');

select * from finish();
rollback;

-- A uuid no account has is free to take as a list id, so a user may create a
-- list with an id an account is created with later (auth.admin.createUser({ id }),
-- e.g. users imported with their ids). That sign-up is refused as before (the
-- account would otherwise write into another user's list), but its hint names
-- that cause, not a hand-over of an earlier account that never was: the
-- sign-up trigger tells it from a deleted account's handed-over personal list
-- (the id in app_private.retired_user_ids), whose hint stays. The refusal
-- changes nothing, and once the list is gone the account gets its personal
-- list. Migration 20261128010100.
begin;
select plan(12);

select from tests.create_supabase_user('sq_squatter');
select from tests.create_supabase_user('sq_sharer');
select from tests.create_supabase_user('sq_heir');

create temporary table ids (name text primary key, id uuid) on commit drop;
insert into ids values ('future', gen_random_uuid());
insert into ids select n, tests.get_supabase_uid(n) from unnest(array['sq_squatter', 'sq_sharer', 'sq_heir']) n;
grant select on ids to public;

-- A sign-up with a chosen id, as auth.admin.createUser({ id }) does; what it
-- was refused with (nothing when it passed). The refusal rolls back only its
-- own subtransaction, as the sign-up's transaction in GoTrue.
create temporary table refused (name text primary key, sqlstate text, constraint_name text, message text, hint text) on commit drop;
create function pg_temp.sign_up(p_name text, p_identifier text) returns void language plpgsql as $$
declare
  v_state text; v_constraint text; v_message text; v_hint text;
begin
  insert into auth.users (instance_id, id, aud, role, email, raw_app_meta_data, raw_user_meta_data, created_at, updated_at, is_anonymous)
  values ('00000000-0000-0000-0000-000000000000', (select id from ids where name = p_name), 'authenticated', 'authenticated',
          p_identifier || '@test.tidesync.dev', '{"provider": "email", "providers": ["email"]}',
          jsonb_build_object('test_identifier', p_identifier), now(), now(), false);
exception when others then
  get stacked diagnostics v_state = returned_sqlstate, v_constraint = constraint_name, v_message = message_text, v_hint = pg_exception_hint;
  insert into refused values (p_name, v_state, v_constraint, v_message, v_hint);
end
$$;

-- What a refused sign-up must leave as it was: the lists with these ids, their members, the reservations.
create function pg_temp.state(p_name text) returns table (what text, v text) language sql as $$
  select 'list', concat_ws(' ', l.title, l.created_by) from public.lists l, ids i where i.name = p_name and l.id = i.id
  union all select 'member', concat_ws(' ', m.user_id, m.role) from public.list_members m, ids i where i.name = p_name and m.list_id = i.id
  union all select 'account', u.email from auth.users u, ids i where i.name = p_name and u.id = i.id
  union all select 'retired', r.user_id::text from app_private.retired_user_ids r, ids i where i.name = p_name and r.user_id = i.id
$$;

-- ------------------------------------------------------------ a list took the id before any account had it
select tests.authenticate_as('sq_squatter');
select lives_ok($$ insert into public.lists (id, title) values ((select id from ids where name = 'future'), 'Taken first') $$,
  'a user creates a list with a uuid no account has (the Data API; a push''s create inserts the same way)');
select tests.clear_authentication();
create temporary table before_squat on commit drop as select * from pg_temp.state('future');

select pg_temp.sign_up('future', 'sq_imported');
select results_eq($$ select sqlstate, constraint_name, message from refused where name = 'future' $$,
  $$ values ('23505', 'lists_pkey', 'a list with the new user''s id exists, so the user cannot get their personal list') $$,
  'an account created with that id is refused as before: 23505 on lists_pkey');
select ok((select hint ilike '%another user%list%before any account%' from refused where name = 'future'),
  'its hint says that another user''s list took the id before the account existed');
select ok((select hint like '%create the user with another id%' and hint like '%owner%delete%' from refused where name = 'future'),
  'and what the operator can do: another id, or the list''s owner deletes it');
select ok((select hint not like '%earlier account%' and hint not like '%handed over%' from refused where name = 'future'),
  'not a hand-over of an earlier account that never was');
select set_eq($$ select * from pg_temp.state('future') $$, $$ select * from before_squat $$,
  'the refusal changes nothing: the list, its members, no account and no reservation of the id');

select tests.authenticate_as('sq_squatter');
delete from public.lists where id = (select id from ids where name = 'future');
select tests.clear_authentication();
select pg_temp.sign_up('future', 'sq_imported_again');
select results_eq($$ select l.created_by, m.user_id, m.role from public.lists l join public.list_members m on m.list_id = l.id
                     where l.id = (select id from ids where name = 'future') $$,
  $$ select id, id, 'owner'::text from ids where name = 'future' $$,
  'once its owner deletes that list, the account is created with its personal list');

-- ------------------------------------------------------------ an earlier account's handed-over personal list: the hint stays
insert into public.list_members (list_id, user_id, role) values ((select id from ids where name = 'sq_sharer'), tests.get_supabase_uid('sq_heir'), 'editor');
delete from auth.users where id = (select id from ids where name = 'sq_sharer');
create temporary table before_retired on commit drop as select * from pg_temp.state('sq_sharer');
select pg_temp.sign_up('sq_sharer', 'sq_sharer_again');
select results_eq($$ select sqlstate, constraint_name, message from refused where name = 'sq_sharer' $$,
  $$ values ('23505', 'lists_pkey', 'a list with the new user''s id exists, so the user cannot get their personal list') $$,
  'an account created again with the id of a deleted user whose personal list was handed over is refused as before');
select ok((select hint like 'The earlier account with this id shared its personal list, which was handed over%' from refused where name = 'sq_sharer'),
  'with the hint of a hand-over');
select set_eq($$ select * from pg_temp.state('sq_sharer') $$, $$ select * from before_retired $$,
  'the refusal changes nothing: the handed-over list, its members, and the id still reserved');

-- ------------------------------------------------------------ the reservations stand
select tests.authenticate_as('sq_squatter');
select throws_ok(format('insert into public.lists (id, title) values (%L, %L)', tests.get_supabase_uid('sq_heir'), 'Squat'),
  '23505', 'duplicate key value violates unique constraint "lists_pkey"', 'a live user''s id is still refused as a list id');
select tests.authenticate_as('sq_heir');
delete from public.lists where id = (select id from ids where name = 'sq_sharer');
select tests.authenticate_as('sq_squatter');
select throws_ok(format('insert into public.lists (id, title) values (%L, %L)', (select id from ids where name = 'sq_sharer'), 'Squat'),
  '23505', 'duplicate key value violates unique constraint "lists_pkey"', 'and so is a deleted user''s, once their handed-over list is gone');

select * from finish();
rollback;

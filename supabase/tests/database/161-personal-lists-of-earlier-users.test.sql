-- Users who signed up before tidesync's migrations (never met the sign-up
-- trigger on_auth_user_created_create_personal_list) get their personal list
-- when migration 20261128009700 runs: exactly what a sign-up gives (the list,
-- their owner membership, the sync state a pull reads), through the function
-- the sign-up trigger calls too. It ran before this file, so the file makes
-- such users (their auth.users rows written with the triggers off, created
-- before the lists were made syncable) and runs the migration's backfill
-- again. A user who has their list, or whose id another user's list has, or
-- whose list with their id was deleted, is left as it is.
begin;
select plan(22);

select from tests.create_supabase_user('early_ref'); -- signed up with tidesync: what a sign-up gives
select from tests.create_supabase_user('late_deleted');
select from tests.create_supabase_user('early_squatter');

-- A user as Supabase Auth wrote them before tidesync was installed: no trigger of ours ran.
create function pg_temp.signed_up_before(p_identifier text, p_anonymous boolean default false,
                                         p_banned boolean default false, p_soft_deleted boolean default false) returns uuid
language plpgsql as $$
declare
  v_id uuid := gen_random_uuid();
  v_at timestamptz := (select t.created_at from app_private.sync_tables t where t.collection = 'lists') - interval '1 day';
begin
  set local session_replication_role = replica;
  insert into auth.users (instance_id, id, aud, role, email, raw_app_meta_data, raw_user_meta_data, created_at, updated_at,
                          is_anonymous, banned_until, deleted_at)
  values ('00000000-0000-0000-0000-000000000000', v_id, 'authenticated', 'authenticated',
          case when not p_anonymous then p_identifier || '@test.tidesync.dev' end,
          '{"provider": "email", "providers": ["email"]}', jsonb_build_object('test_identifier', p_identifier), v_at, v_at,
          p_anonymous, case when p_banned then now() + interval '1 year' end, case when p_soft_deleted then now() end);
  insert into auth.sessions (id, user_id, aal, created_at, updated_at, user_agent)
  values (gen_random_uuid(), v_id, 'aal1', v_at, v_at, 'pgTAP test session');
  set local session_replication_role = origin;
  return v_id;
end;
$$;

create temporary table ids (name text primary key, id uuid) on commit drop;
insert into ids values
  ('ref', tests.get_supabase_uid('early_ref')),
  ('late_deleted', tests.get_supabase_uid('late_deleted')),
  ('squatter', tests.get_supabase_uid('early_squatter')),
  ('plain', pg_temp.signed_up_before('early_plain')),
  ('anonymous', pg_temp.signed_up_before('early_anonymous', p_anonymous => true)),
  ('banned', pg_temp.signed_up_before('early_banned', p_banned => true)),
  ('soft_deleted', pg_temp.signed_up_before('early_soft_deleted', p_soft_deleted => true)),
  ('retired', pg_temp.signed_up_before('early_retired')),
  ('has_own', pg_temp.signed_up_before('early_has_own')),
  ('taken', pg_temp.signed_up_before('early_taken')),
  ('deleted_own', pg_temp.signed_up_before('early_deleted_own'));
grant select on ids to public;
create function pg_temp.id(p_name text) returns uuid language sql stable as $$ select id from ids where name = p_name $$;

-- What a user's sign-up gave them, said without ids or times so that two users compare.
create function pg_temp.what_signup_gives(p uuid) returns jsonb language sql stable as $$
  select jsonb_build_object(
    'list', (select jsonb_build_object('title', l.title, 'color', l.color, 'position', l.position, 'archived', l.archived,
                                       'created_by_them', l.created_by = p)
               from public.lists l where l.id = p),
    'members', (select jsonb_agg(jsonb_build_object('them', m.user_id = p, 'role', m.role)) from public.list_members m where m.list_id = p),
    'records', (select jsonb_agg(jsonb_build_object('collection', s.collection, 'deleted', s.deleted, 'created_by', s.created_by,
                                                    'stamped', s.field_versions ? '*' and s.field_versions - '*' = '{}') order by s.collection)
                  from app_private.sync_records s where s.scope_id = p),
    'entries', (select jsonb_agg(jsonb_build_object('collection', c.collection, 'present', c.present, 'at_its_version', c.seq = s.version)
                                 order by c.collection)
                  from app_private.sync_changes c left join app_private.sync_records s on s.collection = c.collection and s.id = c.id
                 where c.scope_id = p),
    'access', (select jsonb_agg(jsonb_build_object('own_list', a.scope_id = p, 'granted', a.granted)) from app_private.sync_access a where a.user_id = p),
    'usage', (select u.live_records from app_private.sync_usage u where u.user_id = p),
    'retired', exists (select 1 from app_private.retired_user_ids r where r.user_id = p))
$$;

-- ------------------------------------------------------------ the states they are in before
-- An id kept as a deleted user's (an account deleted, then its id written back with the triggers off).
insert into app_private.retired_user_ids (user_id) values (pg_temp.id('retired'));
-- One created their personal list themselves (an app working around its absence) and wrote into it.
select tests.authenticate_as('early_has_own');
insert into public.lists (id, title) values (pg_temp.id('has_own'), 'Mine');
insert into public.tasks (list_id, title) values (pg_temp.id('has_own'), 'Kept');
-- One created it and deleted it again: its sync history is kept (retention_days).
select tests.authenticate_as('early_deleted_own');
insert into public.lists (id, title) values (pg_temp.id('deleted_own'), 'Mine');
delete from public.lists where id = pg_temp.id('deleted_own');
-- Another user's list has one's id (written by the owner or the service role, or before 20261127000500).
select tests.clear_authentication();
insert into public.lists (id, title, created_by) values (pg_temp.id('taken'), 'Squatted', pg_temp.id('squatter'));
-- One signed up with tidesync and deleted their personal list, its history purged since.
select tests.authenticate_as('late_deleted');
delete from public.lists where id = pg_temp.id('late_deleted');
select tests.clear_authentication();
delete from app_private.sync_changes where scope_id = pg_temp.id('late_deleted');
delete from app_private.sync_records where scope_id = pg_temp.id('late_deleted');

-- Each user's state with the versions of their list's rows: what a change would bump.
create function pg_temp.snapshot() returns table (name text, state jsonb, records jsonb) language sql stable as $$
  select i.name, pg_temp.what_signup_gives(i.id),
         (select jsonb_agg(jsonb_build_object('collection', s.collection, 'id', s.id, 'version', s.version) order by s.collection, s.id)
            from app_private.sync_records s where s.scope_id = i.id)
    from ids i
$$;
create temporary table before_backfill on commit drop as select * from pg_temp.snapshot();

select is(pg_temp.what_signup_gives(pg_temp.id('plain')) -> 'list', 'null'::jsonb,
  'a user who signed up before tidesync has no personal list (the sign-up trigger never ran for them)');

-- ------------------------------------------------------------ the migration's backfill
select is(app_private.create_personal_lists_of_earlier_users(), 5,
  'the backfill creates the personal lists of the five earlier users who have none');

select is(pg_temp.what_signup_gives(pg_temp.id('plain')), pg_temp.what_signup_gives(pg_temp.id('ref')),
  'an earlier user has exactly what a sign-up gives: the list Personal, created by them, them as its owner, its sync state, their access to it');
select is(pg_temp.what_signup_gives(pg_temp.id('anonymous')), pg_temp.what_signup_gives(pg_temp.id('ref')),
  'so has an anonymous one (a sign-up gives them one too)');
select is(pg_temp.what_signup_gives(pg_temp.id('banned')), pg_temp.what_signup_gives(pg_temp.id('ref')),
  'and a banned one (as one banned after their sign-up keeps theirs)');
select is(pg_temp.what_signup_gives(pg_temp.id('soft_deleted')), pg_temp.what_signup_gives(pg_temp.id('ref')),
  'and a soft-deleted one (as one soft-deleted after their sign-up keeps theirs until deleted)');
select is(pg_temp.what_signup_gives(pg_temp.id('retired')), pg_temp.what_signup_gives(pg_temp.id('ref')),
  'one whose id was kept as a deleted user''s takes it back, as a sign-up with that id does');

-- What a pull reads: the first full sync lists the personal list, and the user writes into it.
select tests.authenticate_as('early_plain');
select ok(pg_temp.id('plain') = any (app_private.visible_scope_ids()), 'the personal list is among the earlier user''s scopes');
select set_eq($$ select c.collection, c.id from app_private.sync_changes c
                   where c.scope_id = any (app_private.visible_scope_ids()) and c.present $$,
  $$ select 'lists'::text, pg_temp.id('plain') union all select 'list_members', m.id from public.list_members m where m.list_id = pg_temp.id('plain') $$,
  'their first full sync lists the personal list and their membership');
select lives_ok($$ insert into public.tasks (list_id, title) values (pg_temp.id('plain'), 'Buy milk') $$,
  'they write into it (README''s task into list_id = their user id)');
select tests.authenticate_as('early_ref');
select ok(not pg_temp.id('plain') = any (app_private.visible_scope_ids()), 'nobody else sees it');
select tests.clear_authentication();

-- ------------------------------------------------------------ left as they are
select is((select jsonb_build_object('state', state, 'records', records) from pg_temp.snapshot() where name = 'has_own'),
          (select jsonb_build_object('state', state, 'records', records) from before_backfill where name = 'has_own'),
  'a user who has their personal list keeps it as it is (its title, its task, its versions)');
select is((select l.created_by from public.lists l where l.id = pg_temp.id('taken')), pg_temp.id('squatter'),
  'another user''s list with an earlier user''s id stays that user''s');
select is_empty($$ select 1 from public.list_members m where m.list_id = pg_temp.id('taken') and m.user_id = pg_temp.id('taken') $$,
  'and the earlier user gets no membership of it (a sign-up with that id is refused instead)');
select is(pg_temp.what_signup_gives(pg_temp.id('deleted_own')), (select state from before_backfill where name = 'deleted_own'),
  'a list with the user''s id that was deleted (its history kept) is not created again: the user deleted it, and only they may');
select is(pg_temp.what_signup_gives(pg_temp.id('late_deleted')), (select state from before_backfill where name = 'late_deleted'),
  'nor is the personal list of a user who signed up with tidesync and deleted it, once its history is purged');

-- ------------------------------------------------------------ run again
create temporary table after_backfill on commit drop as select * from pg_temp.snapshot();
select is(app_private.create_personal_lists_of_earlier_users(), 0, 'run again, it creates nothing');
select set_eq($$ select name, state::text, records::text from pg_temp.snapshot() $$,
  $$ select name, state::text, records::text from after_backfill $$, 'and changes nothing');

-- ------------------------------------------------------------ the sign-up trigger, through the same function
select lives_ok($$ select tests.create_supabase_user('late_signup') $$, 'a sign-up still works');
select is(pg_temp.what_signup_gives(tests.get_supabase_uid('late_signup')), pg_temp.what_signup_gives(pg_temp.id('ref')),
  'and gives what it gave');

select is(tests.function_callers('app_private.create_personal_lists(uuid[])'), '{}'::text[], 'create_personal_lists: no API role');
select is(tests.function_callers('app_private.create_personal_lists_of_earlier_users()'), '{}'::text[],
  'create_personal_lists_of_earlier_users: no API role');

select * from finish();
rollback;

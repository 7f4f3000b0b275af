-- An installation whose device row goes while its user lives (pruned by the
-- signed-out cap, migration 20261127000220) is forgotten in the sync state
-- like one of a deleted user: its row is gone when the user is deleted, so
-- nothing else would ever find it, and a new account on that phone would be
-- linked to the old account's writes (migration 20261127002200). A stamp names
-- a device row, one per user and installation (migration 20261128001200):
-- another user's writes on the same tablet stay theirs.
begin;
select plan(5);

select from tests.create_supabase_user('pruned_owner');
select from tests.create_supabase_user('pruned_ann');
select from tests.create_supabase_user('pruned_sharer');
select from tests.create_supabase_user('pruned_newcomer');

select tests.authenticate_as('pruned_owner');
insert into public.lists (id, title) values ('a5080000-0000-4000-8000-000000000001', 'Shared');
select tests.clear_authentication();
insert into public.list_members (list_id, user_id, role)
values ('a5080000-0000-4000-8000-000000000001', tests.get_supabase_uid('pruned_ann'), 'editor'),
       ('a5080000-0000-4000-8000-000000000001', tests.get_supabase_uid('pruned_sharer'), 'editor');

-- Ann's old phone, and a tablet she shares with the sharer; hers are signed
-- out long ago. Each writes a task, stamped with its device row (as a push
-- stamps it).
insert into app_private.devices (id, user_id, installation_id, platform, app_version, build_number, last_seen_at, revoked_at, created_at)
values
  ('a5080000-0000-4000-8000-000000000401', tests.get_supabase_uid('pruned_ann'), 'a5080000-0000-4000-8000-000000000101', 'ios', '1.0.0', 1, now(), now() - interval '2 days', now() - interval '3 days'),
  ('a5080000-0000-4000-8000-000000000402', tests.get_supabase_uid('pruned_ann'), 'a5080000-0000-4000-8000-000000000102', 'ios', '1.0.0', 1, now(), now() - interval '2 days', now() - interval '3 days');
insert into app_private.devices (id, user_id, installation_id, platform, app_version, build_number, last_seen_at, created_at)
values ('a5080000-0000-4000-8000-000000000403', tests.get_supabase_uid('pruned_sharer'), 'a5080000-0000-4000-8000-000000000102', 'ios', '1.0.0', 1, now(), now() - interval '3 days');
select tests.authenticate_as('pruned_ann');
select from set_config('tidesync.device_id', 'a5080000-0000-4000-8000-000000000401', true);
insert into public.tasks (id, list_id, title) values ('a5080000-0000-4000-8000-000000000201', 'a5080000-0000-4000-8000-000000000001', 'From the old phone');
select from set_config('tidesync.device_id', 'a5080000-0000-4000-8000-000000000402', true);
insert into public.tasks (id, list_id, title) values ('a5080000-0000-4000-8000-000000000202', 'a5080000-0000-4000-8000-000000000001', 'From the shared tablet');
select tests.authenticate_as('pruned_sharer');
select from set_config('tidesync.device_id', 'a5080000-0000-4000-8000-000000000403', true);
insert into public.tasks (id, list_id, title) values ('a5080000-0000-4000-8000-000000000203', 'a5080000-0000-4000-8000-000000000001', 'The sharer''s, from the tablet');
select from set_config('tidesync.device_id', '', true);
select tests.clear_authentication();

-- Then she signs in from 21 new installations, each signed out in turn: the
-- old phone and the tablet are pruned (the 20 most recently signed out stay).
insert into app_private.devices (user_id, installation_id, platform, app_version, build_number, last_seen_at, revoked_at)
select tests.get_supabase_uid('pruned_ann'), ('a5080000-0000-4000-8000-0000000003' || lpad(g::text, 2, '0'))::uuid, 'ios', '1.0.0', 1,
       now(), now() - (g || ' minutes')::interval
  from generate_series(1, 21) g;
select is((select count(*)::int from app_private.devices
            where user_id = tests.get_supabase_uid('pruned_ann')
              and installation_id in ('a5080000-0000-4000-8000-000000000101', 'a5080000-0000-4000-8000-000000000102')), 0,
  'the old phone and the tablet are pruned from her devices');

create function pg_temp.d(p_task uuid) returns text language sql as $$
  select field_versions -> '*' ->> 'd' from app_private.sync_records where collection = 'tasks' and id = p_task
$$;

-- She deletes her account; a new account signs up on her old phone.
delete from auth.users where id = tests.get_supabase_uid('pruned_ann');
insert into app_private.devices (user_id, installation_id, platform, app_version, build_number, last_seen_at, created_at)
values (tests.get_supabase_uid('pruned_newcomer'), 'a5080000-0000-4000-8000-000000000101', 'ios', '1.0.0', 1, now(), now() + interval '1 minute');
select from set_config('role', (select nspowner::regrole::text from pg_namespace where nspname = 'app_private'), true);
select from app_private.purge_sync_retention(now());
select tests.clear_authentication();

select is(pg_temp.d('a5080000-0000-4000-8000-000000000201'), null,
  'the pruned phone is forgotten: the new account on it is not linked to her writes');
select is(array[pg_temp.d('a5080000-0000-4000-8000-000000000202'), pg_temp.d('a5080000-0000-4000-8000-000000000203')],
  array[null, 'a5080000-0000-4000-8000-000000000403'],
  'on the pruned tablet her writes are forgotten, the sharer''s stay theirs: a stamp names one user''s device');
select is((select count(*)::int from app_private.installations_to_forget), 0, 'the queue is emptied');

-- The sharer's account goes too: the tablet has no user left.
delete from auth.users where id = tests.get_supabase_uid('pruned_sharer');
select from set_config('role', (select nspowner::regrole::text from pg_namespace where nspname = 'app_private'), true);
select from app_private.purge_sync_retention(now());
select tests.clear_authentication();
select is(pg_temp.d('a5080000-0000-4000-8000-000000000203'), null, 'once the sharer is deleted their device on the tablet is forgotten too');

select * from finish();
rollback;

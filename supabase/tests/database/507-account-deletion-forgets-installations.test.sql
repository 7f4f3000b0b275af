-- However a user is deleted, the installation ids of their devices leave the
-- sync state (field_versions' "d" of what they wrote in lists that survive):
-- the purge, a hard delete straight from auth.users (the dashboard,
-- auth.admin.deleteUser(id)), a bulk delete, a soft delete
-- (auth.admin.deleteUser(id, true) sets deleted_at). The purge forgets them at
-- the end of its run; the others are queued and forgotten by the next
-- retention purge (migration 20261127001100). An installation a user who can
-- still sign in registered before the deletion (a shared phone) is kept; one a
-- new account registers after it is not.
begin;
select plan(8);

select from tests.create_supabase_user('inst_owner');
select from tests.create_supabase_user('inst_purged');
select from tests.create_supabase_user('inst_hard');
select from tests.create_supabase_user('inst_soft');
select from tests.create_supabase_user('inst_bulk1');
select from tests.create_supabase_user('inst_bulk2');
select from tests.create_supabase_user('inst_sharer');
select from tests.create_supabase_user('inst_newcomer');

-- One list of the owner's; everyone else an editor of it, each with a task.
select tests.authenticate_as('inst_owner');
insert into public.lists (id, title) values ('a5070000-0000-4000-8000-000000000001', 'Shared');
select tests.clear_authentication();
insert into public.list_members (list_id, user_id, role)
select 'a5070000-0000-4000-8000-000000000001', tests.get_supabase_uid(u), 'editor'
  from unnest(array['inst_purged', 'inst_hard', 'inst_soft', 'inst_bulk1', 'inst_bulk2']) u;

-- Each writes a task from a device of theirs (the push sets tidesync.device_id),
-- which is registered to them.
select tests.authenticate_as('inst_purged');
select from set_config('tidesync.device_id', 'a5070000-0000-4000-8000-000000000101', true);
insert into public.tasks (id, list_id, title) values ('a5070000-0000-4000-8000-000000000201', 'a5070000-0000-4000-8000-000000000001', 'A task');
select tests.authenticate_as('inst_hard');
select from set_config('tidesync.device_id', 'a5070000-0000-4000-8000-000000000102', true);
insert into public.tasks (id, list_id, title) values ('a5070000-0000-4000-8000-000000000202', 'a5070000-0000-4000-8000-000000000001', 'A task');
select tests.authenticate_as('inst_soft');
select from set_config('tidesync.device_id', 'a5070000-0000-4000-8000-000000000103', true);
insert into public.tasks (id, list_id, title) values ('a5070000-0000-4000-8000-000000000203', 'a5070000-0000-4000-8000-000000000001', 'A task');
select tests.authenticate_as('inst_bulk1');
select from set_config('tidesync.device_id', 'a5070000-0000-4000-8000-000000000104', true);  -- one tablet, both deleted together
insert into public.tasks (id, list_id, title) values ('a5070000-0000-4000-8000-000000000204', 'a5070000-0000-4000-8000-000000000001', 'A task');
select tests.authenticate_as('inst_bulk2');
select from set_config('tidesync.device_id', 'a5070000-0000-4000-8000-000000000104', true);
insert into public.tasks (id, list_id, title) values ('a5070000-0000-4000-8000-000000000205', 'a5070000-0000-4000-8000-000000000001', 'A task');
select tests.authenticate_as('inst_hard');
select from set_config('tidesync.device_id', 'a5070000-0000-4000-8000-000000000105', true);  -- a phone the sharer uses too
insert into public.tasks (id, list_id, title) values ('a5070000-0000-4000-8000-000000000206', 'a5070000-0000-4000-8000-000000000001', 'A task');
select from set_config('tidesync.device_id', '', true);
select tests.clear_authentication();
insert into app_private.devices (user_id, installation_id, platform, app_version, build_number, last_seen_at, revoked_at)
values
  (tests.get_supabase_uid('inst_purged'), 'a5070000-0000-4000-8000-000000000101', 'ios', '1.0.0', 1, now(), now()),
  (tests.get_supabase_uid('inst_hard'), 'a5070000-0000-4000-8000-000000000102', 'ios', '1.0.0', 1, now(), now()),
  (tests.get_supabase_uid('inst_soft'), 'a5070000-0000-4000-8000-000000000103', 'ios', '1.0.0', 1, now(), now()),
  (tests.get_supabase_uid('inst_bulk1'), 'a5070000-0000-4000-8000-000000000104', 'ios', '1.0.0', 1, now(), now()),
  (tests.get_supabase_uid('inst_bulk2'), 'a5070000-0000-4000-8000-000000000104', 'ios', '1.0.0', 1, now(), now()),
  (tests.get_supabase_uid('inst_hard'), 'a5070000-0000-4000-8000-000000000105', 'ios', '1.0.0', 1, now(), now()),
  (tests.get_supabase_uid('inst_sharer'), 'a5070000-0000-4000-8000-000000000105', 'ios', '1.0.0', 1, now(), now());

-- The stamp left on a task.
create function pg_temp.d(p_task uuid) returns text language sql as $$
  select field_versions -> '*' ->> 'd' from app_private.sync_records where collection = 'tasks' and id = p_task
$$;

-- ------------------------------------------------------------ the purge
select tests.authenticate_as('inst_purged');
select from app_private.request_account_deletion(7);
select tests.clear_authentication();
select from set_config('role', (select nspowner::regrole::text from pg_namespace where nspname = 'app_private'), true);
select is((select users_deleted from app_private.run_account_deletions(now() + interval '8 days')), 1, 'the purge deletes the user');
select tests.clear_authentication();
select is(pg_temp.d('a5070000-0000-4000-8000-000000000201'), null, 'the purge forgets the purged user''s installation');

-- ------------------------------------------------------------ deleted by an admin, forgotten by the retention purge
delete from auth.users where id = tests.get_supabase_uid('inst_hard');
update auth.users set deleted_at = now() where id = tests.get_supabase_uid('inst_soft');
delete from auth.users where id in (tests.get_supabase_uid('inst_bulk1'), tests.get_supabase_uid('inst_bulk2'));
-- A new account signs in on the hard-deleted user's phone after the deletion.
insert into app_private.devices (user_id, installation_id, platform, app_version, build_number, last_seen_at, revoked_at, created_at)
values (tests.get_supabase_uid('inst_newcomer'), 'a5070000-0000-4000-8000-000000000102', 'ios', '1.0.0', 1, now(), now(), now() + interval '1 minute');
select from set_config('role', (select nspowner::regrole::text from pg_namespace where nspname = 'app_private'), true);
select from app_private.purge_sync_retention(now());
select tests.clear_authentication();

select is(pg_temp.d('a5070000-0000-4000-8000-000000000202'), null,
  'a user deleted straight from auth.users (auth.admin.deleteUser) has their installation forgotten, though a new account signed in on it since');
select is(pg_temp.d('a5070000-0000-4000-8000-000000000206'), 'a5070000-0000-4000-8000-000000000105',
  'an installation another user still signs in on stays: it is their device too');

select is(pg_temp.d('a5070000-0000-4000-8000-000000000203'), null,
  'a soft-deleted user (auth.admin.deleteUser(id, true)) has their installation forgotten');

select is(array[pg_temp.d('a5070000-0000-4000-8000-000000000204'), pg_temp.d('a5070000-0000-4000-8000-000000000205')], array[null, null]::text[],
  'two users of one tablet deleted in one statement: the tablet is forgotten (neither keeps it for the other)');

select is((select count(*)::int from app_private.sync_records where field_versions -> '*' ->> 'd' is not null and id::text like 'a5070000%'), 1,
  'only the shared phone''s stamp is left of the test''s');

select is((select count(*)::int from app_private.installations_to_forget), 0, 'the queue is emptied');

select * from finish();
rollback;

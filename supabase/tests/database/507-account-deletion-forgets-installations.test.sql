-- However a user is deleted, the stamps of their devices leave the
-- sync state (field_versions' "d" of what they wrote in lists that survive):
-- the purge, a hard delete straight from auth.users (the dashboard,
-- auth.admin.deleteUser(id)), a bulk delete, a soft delete
-- (auth.admin.deleteUser(id, true) sets deleted_at). The purge forgets them at
-- the end of its run; the others are queued and forgotten by the next
-- retention purge (migration 20261127001100). A stamp names a device row, one
-- per user and installation (migration 20261128001200): what another account
-- wrote on the same phone, before or after the deletion, stays theirs.
begin;
select plan(9);

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
  from unnest(array['inst_purged', 'inst_hard', 'inst_soft', 'inst_bulk1', 'inst_bulk2', 'inst_sharer', 'inst_newcomer']) u;

-- Their devices; a device's stamp on what it pushes is its row's id (the push
-- sets tidesync.device_id to it): one per user and installation.
insert into app_private.devices (id, user_id, installation_id, platform, app_version, build_number, last_seen_at, revoked_at)
values
  ('a5070000-0000-4000-8000-000000000301', tests.get_supabase_uid('inst_purged'), 'a5070000-0000-4000-8000-000000000101', 'ios', '1.0.0', 1, now(), now()),
  ('a5070000-0000-4000-8000-000000000302', tests.get_supabase_uid('inst_hard'), 'a5070000-0000-4000-8000-000000000102', 'ios', '1.0.0', 1, now(), now()),
  ('a5070000-0000-4000-8000-000000000303', tests.get_supabase_uid('inst_soft'), 'a5070000-0000-4000-8000-000000000103', 'ios', '1.0.0', 1, now(), now()),
  ('a5070000-0000-4000-8000-000000000304', tests.get_supabase_uid('inst_bulk1'), 'a5070000-0000-4000-8000-000000000104', 'ios', '1.0.0', 1, now(), now()),
  ('a5070000-0000-4000-8000-000000000305', tests.get_supabase_uid('inst_bulk2'), 'a5070000-0000-4000-8000-000000000104', 'ios', '1.0.0', 1, now(), now()),
  ('a5070000-0000-4000-8000-000000000306', tests.get_supabase_uid('inst_hard'), 'a5070000-0000-4000-8000-000000000105', 'ios', '1.0.0', 1, now(), now()),
  ('a5070000-0000-4000-8000-000000000307', tests.get_supabase_uid('inst_sharer'), 'a5070000-0000-4000-8000-000000000105', 'ios', '1.0.0', 1, now(), now());

create function pg_temp.write_task(p_user text, p_device uuid, p_task uuid) returns void language plpgsql as $$
begin
  perform tests.authenticate_as(p_user);
  perform set_config('tidesync.device_id', p_device::text, true);
  insert into public.tasks (id, list_id, title) values (p_task, 'a5070000-0000-4000-8000-000000000001', 'A task');
  perform set_config('tidesync.device_id', '', true);
  perform tests.clear_authentication();
end
$$;
select pg_temp.write_task('inst_purged', 'a5070000-0000-4000-8000-000000000301', 'a5070000-0000-4000-8000-000000000201');
select pg_temp.write_task('inst_hard', 'a5070000-0000-4000-8000-000000000302', 'a5070000-0000-4000-8000-000000000202');
select pg_temp.write_task('inst_soft', 'a5070000-0000-4000-8000-000000000303', 'a5070000-0000-4000-8000-000000000203');
select pg_temp.write_task('inst_bulk1', 'a5070000-0000-4000-8000-000000000304', 'a5070000-0000-4000-8000-000000000204');  -- one tablet, both deleted together
select pg_temp.write_task('inst_bulk2', 'a5070000-0000-4000-8000-000000000305', 'a5070000-0000-4000-8000-000000000205');
select pg_temp.write_task('inst_hard', 'a5070000-0000-4000-8000-000000000306', 'a5070000-0000-4000-8000-000000000206');  -- a phone the sharer uses too
select pg_temp.write_task('inst_sharer', 'a5070000-0000-4000-8000-000000000307', 'a5070000-0000-4000-8000-000000000207');

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
-- A new account signs in on the hard-deleted user's phone after the deletion,
-- and writes from it before the retention purge runs.
insert into app_private.devices (id, user_id, installation_id, platform, app_version, build_number, last_seen_at, revoked_at, created_at)
values ('a5070000-0000-4000-8000-000000000308', tests.get_supabase_uid('inst_newcomer'), 'a5070000-0000-4000-8000-000000000102', 'ios', '1.0.0', 1, now(), now(), now() + interval '1 minute');
select pg_temp.write_task('inst_newcomer', 'a5070000-0000-4000-8000-000000000308', 'a5070000-0000-4000-8000-000000000208');
select from set_config('role', (select nspowner::regrole::text from pg_namespace where nspname = 'app_private'), true);
select from app_private.purge_sync_retention(now());
select tests.clear_authentication();

select is(pg_temp.d('a5070000-0000-4000-8000-000000000202'), null,
  'a user deleted straight from auth.users (auth.admin.deleteUser) has their installation forgotten, though a new account signed in on it since');
select is(pg_temp.d('a5070000-0000-4000-8000-000000000208'), 'a5070000-0000-4000-8000-000000000308',
  'the new account on that phone keeps its own writes'' stamps: its device is another row');
select is(array[pg_temp.d('a5070000-0000-4000-8000-000000000206'), pg_temp.d('a5070000-0000-4000-8000-000000000207')],
  array[null, 'a5070000-0000-4000-8000-000000000307'],
  'on a phone another user still signs in on, the deleted user''s writes are forgotten and the other''s stay theirs');

select is(pg_temp.d('a5070000-0000-4000-8000-000000000203'), null,
  'a soft-deleted user (auth.admin.deleteUser(id, true)) has their installation forgotten');

select is(array[pg_temp.d('a5070000-0000-4000-8000-000000000204'), pg_temp.d('a5070000-0000-4000-8000-000000000205')], array[null, null]::text[],
  'two users of one tablet deleted in one statement: the tablet is forgotten (neither keeps it for the other)');

select is((select count(*)::int from app_private.sync_records where field_versions -> '*' ->> 'd' is not null and id::text like 'a5070000%'), 2,
  'only the stamps of the users left (the sharer, the new account) are left of the test''s');

select is((select count(*)::int from app_private.installations_to_forget), 0, 'the queue is emptied');

select * from finish();
rollback;

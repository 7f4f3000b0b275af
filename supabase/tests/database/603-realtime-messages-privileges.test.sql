-- What the migration role (hosted Supabase's `postgres`; here the owner of
-- app_private) holds on Supabase Realtime's realtime.messages, as Realtime's
-- own schema gives it (supabase/realtime priv/repo/tenant_db_dump_15.sql:
-- GRANT ALL ON TABLE realtime.messages TO postgres; usage on the schema with
-- grant option, no create), and that the project needs nothing more: no
-- membership of supabase_realtime_admin, which supabase/postgres'
-- 20250421084701_revoke_admin_roles_from_postgres and Realtime's
-- 20260707120000_restrict_realtime_schema revoke from postgres. Deleting a user
-- deletes their pokes (app_private.forget_pokes_of_deleted_users) with that.
begin;
select plan(4);

create function pg_temp.migration_role() returns name language sql stable as $$
  select pg_get_userbyid(nspowner) from pg_namespace where nspname = 'app_private'
$$;

-- An earlier stand-in granted the membership, and memberships are cluster-wide:
-- take it away for this transaction, as Supabase has.
do $$
begin
  if pg_has_role(pg_temp.migration_role(), 'supabase_realtime_admin', 'member') then
    execute format('revoke supabase_realtime_admin from %I', pg_temp.migration_role());
  end if;
end
$$;

select is(array(select a.privilege_type::text from pg_class c, aclexplode(c.relacl) a
                 where c.oid = 'realtime.messages'::regclass and a.grantee = pg_temp.migration_role()::regrole
                 order by 1),
  array['DELETE', 'INSERT', 'REFERENCES', 'SELECT', 'TRIGGER', 'TRUNCATE', 'UPDATE'],
  'the migration role holds ALL on realtime.messages by a grant of its own, as Realtime''s schema gives postgres');
select ok(has_schema_privilege(pg_temp.migration_role(), 'realtime', 'usage with grant option')
      and not has_schema_privilege(pg_temp.migration_role(), 'realtime', 'create'),
  'it may use schema realtime (and grant that) but not create in it');

select from tests.create_supabase_user('realtime_privileges_gone');
select from set_config('tests.gone_topic', 'tidesync:user:' || tests.get_supabase_uid('realtime_privileges_gone'), true);
insert into realtime.messages (topic, extension, event, payload, private)
values (current_setting('tests.gone_topic'), 'broadcast', 'poke', '{}', true);

create function pg_temp.delete_user_as_migration_role(p_user_id uuid) returns void language plpgsql as $$
begin
  execute format('set local role %I', pg_temp.migration_role());
  delete from auth.users where id = p_user_id;
  reset role;
end
$$;
select lives_ok(format('select pg_temp.delete_user_as_migration_role(%L)', tests.get_supabase_uid('realtime_privileges_gone')),
  'the migration role, no member of supabase_realtime_admin, deletes a user who has pokes');
select is((select count(*)::integer from realtime.messages where topic = current_setting('tests.gone_topic')), 0,
  'and the user''s pokes went with them');

select * from finish();
rollback;

-- app_private.notification_preference_audit: RLS and its exact policy; every
-- change to a preference document appends one row (user, device of the
-- session, session, time, old -> new); its user can read it, another user,
-- anon cannot; nobody can insert, update or delete rows -- not the user, not
-- the service role, not even the table owner -- except the cascade that
-- erases a deleted user (and the pruning past the bound of 1,000 entries a
-- user, pgTAP 175); EXECUTE privileges of the trigger functions.
begin;
select plan(27);

do $$ begin
  perform tests.create_supabase_user('audit_owner');
  perform tests.create_supabase_user('audit_other');
end $$;

-- The owner's session runs on a registered device.
insert into app_private.devices (user_id, installation_id, platform, app_version, build_number, session_id)
values (tests.get_supabase_uid('audit_owner'), 'a0000000-0000-4000-8000-000000000303', 'ios', '1.0', 1, tests.get_session_id('audit_owner'));

-- ------------------------------------------------------------ structure
select policies_are('app_private', 'notification_preference_audit', array[
  'Users can read their own notification preference audit'
]);
select policy_cmd_is('app_private', 'notification_preference_audit', 'Users can read their own notification preference audit', 'select', 'the only policy is for SELECT');
select policy_roles_are('app_private', 'notification_preference_audit', 'Users can read their own notification preference audit', array['authenticated'], 'the read policy is for authenticated');
select table_privs_are('app_private', 'notification_preference_audit', 'anon', array[]::text[], 'anon has no privilege on the audit trail');
select table_privs_are('app_private', 'notification_preference_audit', 'authenticated', array['SELECT'], 'authenticated may only read the audit trail');
select table_privs_are('app_private', 'notification_preference_audit', 'service_role', array['SELECT'], 'service_role may only read the audit trail');

-- --------------------------------------------------------- recording
select tests.authenticate_as('audit_owner');
insert into app_private.notification_preferences (user_id, categories, quiet_hours_enabled, quiet_hours_start, quiet_hours_end, quiet_hours_timezone)
values (auth.uid(), '{"security": {"push": true, "email": true, "in_app": true}}', false, '22:00', '07:00', 'UTC');
update app_private.notification_preferences set quiet_hours_enabled = true, quiet_hours_timezone = 'Asia/Tokyo' where user_id = auth.uid();
select results_eq(
  $$ select old_version, new_version, old_document is null, new_document -> 'quiet_hours' ->> 'timezone'
     from app_private.notification_preference_audit order by id $$,
  $$ values (null::int, 1, true, 'UTC'::text), (1, 2, false, 'Asia/Tokyo'::text) $$,
  'each change appends one row with the versions and the documents before and after'
);
select results_eq(
  $$ select old_document -> 'quiet_hours' -> 'enabled', new_document -> 'quiet_hours' -> 'enabled'
     from app_private.notification_preference_audit where new_version = 2 $$,
  $$ values ('false'::jsonb, 'true'::jsonb) $$,
  'the row shows old -> new'
);
select results_eq(
  $$ select user_id, session_id, device_id from app_private.notification_preference_audit where new_version = 2 $$,
  $$ select tests.get_supabase_uid('audit_owner'), tests.get_session_id('audit_owner'), d.id
     from app_private.devices d where d.installation_id = 'a0000000-0000-4000-8000-000000000303' $$,
  'the row names the user, the session and the device bound to it'
);
select results_eq(
  $$ select count(*)::int from app_private.notification_preference_audit a
     join app_private.notification_preferences p on p.user_id = a.user_id and p.updated_at = a.changed_at and p.version = a.new_version $$,
  array[1],
  'changed_at is the time of the change (the new version''s updated_at)'
);

-- ---------------------------------------------------- the owner: read only
select throws_ok(
  $$ update app_private.notification_preference_audit set new_version = 99 $$,
  '42501', null, 'the user cannot update their audit rows'
);
select throws_ok(
  $$ delete from app_private.notification_preference_audit $$,
  '42501', null, 'the user cannot delete their audit rows'
);
select throws_ok(
  $$ insert into app_private.notification_preference_audit (user_id, changed_at, new_version, new_document)
     values (auth.uid(), now(), 7, '{}') $$,
  '42501', null, 'the user cannot forge audit rows'
);
select tests.clear_authentication();

-- ----------------------------------------------------- another user, anon
select tests.authenticate_as('audit_other');
select is_empty($$ select 1 from app_private.notification_preference_audit $$, 'another user cannot read the owner''s audit rows');
select throws_ok($$ delete from app_private.notification_preference_audit $$, '42501', null, 'another user cannot delete audit rows');
select tests.clear_authentication();
select tests.authenticate_as_anon();
select throws_ok($$ select * from app_private.notification_preference_audit $$, '42501', null, 'anon cannot read the audit trail');
select tests.clear_authentication();

-- ---------------------------------------------------------- service role
select tests.authenticate_as_service_role();
select results_eq(
  $$ select count(*)::int from app_private.notification_preference_audit where user_id = tests.get_supabase_uid('audit_owner') $$,
  array[2], 'the service role reads the audit trail'
);
select throws_ok($$ delete from app_private.notification_preference_audit $$, '42501', null, 'the service role cannot delete audit rows');
select tests.clear_authentication();

-- -------------------------------------- the table owner (and a superuser)
-- The table owner is the migration role (hosted `postgres`); the trigger
-- refuses it even though privileges never bind an owner.
do $$ begin
  perform set_config('role', (select tableowner from pg_tables where schemaname = 'app_private' and tablename = 'notification_preference_audit'), true);
end $$;
select throws_ok(
  $$ update app_private.notification_preference_audit set new_version = 99 $$,
  '42501', 'notification preference audit rows are append-only (UPDATE refused)',
  'the table owner cannot update audit rows'
);
select throws_ok(
  $$ delete from app_private.notification_preference_audit $$,
  '42501', 'notification preference audit rows are append-only (DELETE refused)',
  'the table owner cannot delete audit rows'
);
select throws_ok(
  $$ truncate app_private.notification_preference_audit $$,
  '42501', 'notification preference audit rows are append-only (TRUNCATE refused)',
  'the table owner cannot truncate the audit trail'
);
select tests.clear_authentication();
select throws_ok(
  $$ update app_private.notification_preference_audit set new_version = 99 $$,
  '42501', null,
  'a superuser session is refused too'
);

-- ----------------------------------------------------------- erasure
delete from auth.users where id = tests.get_supabase_uid('audit_owner');
select is_empty(
  $$ select 1 from app_private.notification_preference_audit a where not exists (select 1 from auth.users u where u.id = a.user_id) $$,
  'deleting the user erases their audit trail (the only delete that passes)'
);

-- --------------------------------------------------- function privileges
select ok(
  not has_function_privilege('anon', 'app_private.record_notification_preference_change()', 'execute')
  and not has_function_privilege('authenticated', 'app_private.record_notification_preference_change()', 'execute')
  and not has_function_privilege('service_role', 'app_private.record_notification_preference_change()', 'execute'),
  'record_notification_preference_change(): no API role may execute it (trigger only)'
);
select is(
  (select array[prosecdef::text, array_to_string(proconfig, ',')] from pg_proc where oid = 'app_private.record_notification_preference_change()'::regprocedure),
  array['true', 'search_path=""'],
  'record_notification_preference_change is security definer with an empty search_path'
);
select ok(
  not has_function_privilege('anon', 'app_private.forbid_audit_rewrite()', 'execute')
  and not has_function_privilege('authenticated', 'app_private.forbid_audit_rewrite()', 'execute')
  and not has_function_privilege('service_role', 'app_private.forbid_audit_rewrite()', 'execute'),
  'forbid_audit_rewrite(): no API role may execute it (trigger only)'
);
select ok(
  not has_function_privilege('anon', 'app_private.notification_preference_document(app_private.notification_preferences)', 'execute')
  and not has_function_privilege('authenticated', 'app_private.notification_preference_document(app_private.notification_preferences)', 'execute')
  and has_function_privilege('service_role', 'app_private.notification_preference_document(app_private.notification_preferences)', 'execute'),
  'notification_preference_document(): EXECUTE for service_role only (effective_notification_preferences, the push sender''s, uses it)'
);

select * from finish();
rollback;

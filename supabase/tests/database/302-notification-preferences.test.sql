-- app_private.notification_preferences: RLS and exact policy names; what the
-- owner, another user, anon and the service role can do; the database's own
-- checks (declared categories and channels, required category, HH:MM, time
-- zone shape) and the server-owned version; EXECUTE privileges.
begin;
select plan(35);

do $$ begin
  perform tests.create_supabase_user('prefs_owner');
  perform tests.create_supabase_user('prefs_other');
end $$;

create temporary table valid_categories as
select '{"security": {"push": true, "email": false, "in_app": false},
         "sync_conflicts": {"push": true, "email": false, "in_app": true},
         "reminders": {"push": false, "email": false, "in_app": false},
         "product_updates": {"push": false, "email": false, "in_app": true}}'::jsonb as categories;
grant select on valid_categories to authenticated, service_role, anon;

-- ------------------------------------------------------------ structure
select policies_are('app_private', 'notification_preferences', array[
  'Users can read their own notification preferences',
  'Users can create their own notification preferences',
  'Users can update their own notification preferences'
]);
select policy_cmd_is('app_private', 'notification_preferences', 'Users can read their own notification preferences', 'select', 'read policy: SELECT');
select policy_cmd_is('app_private', 'notification_preferences', 'Users can create their own notification preferences', 'insert', 'create policy: INSERT');
select policy_cmd_is('app_private', 'notification_preferences', 'Users can update their own notification preferences', 'update', 'update policy: UPDATE');
select policy_roles_are('app_private', 'notification_preferences', 'Users can read their own notification preferences', array['authenticated'], 'read policy: authenticated');
select policy_roles_are('app_private', 'notification_preferences', 'Users can create their own notification preferences', array['authenticated'], 'create policy: authenticated');
select policy_roles_are('app_private', 'notification_preferences', 'Users can update their own notification preferences', array['authenticated'], 'update policy: authenticated');
select table_privs_are('app_private', 'notification_preferences', 'anon', array[]::text[], 'anon has no privilege on notification preferences');
select table_privs_are('app_private', 'notification_preferences', 'authenticated', array['SELECT'], 'authenticated: table-level SELECT only (writes are per column)');
select table_privs_are('app_private', 'notification_preferences', 'service_role', array['SELECT'], 'service_role may read preferences, not write them');
select ok(
  not has_column_privilege('authenticated', 'app_private.notification_preferences', 'version', 'UPDATE')
  and not has_column_privilege('authenticated', 'app_private.notification_preferences', 'version', 'INSERT')
  and not has_column_privilege('authenticated', 'app_private.notification_preferences', 'updated_at', 'UPDATE')
  and not has_column_privilege('authenticated', 'app_private.notification_preferences', 'user_id', 'UPDATE'),
  'authenticated cannot write version, updated_at or move a document to another user'
);

-- ------------------------------------------------------------- the owner
select tests.authenticate_as('prefs_owner');
select lives_ok(
  $$ insert into app_private.notification_preferences (user_id, categories, quiet_hours_enabled, quiet_hours_start, quiet_hours_end, quiet_hours_timezone)
     select auth.uid(), categories, true, '22:00', '07:00', 'Europe/Paris' from valid_categories $$,
  'the owner saves their document'
);
select results_eq($$ select version from app_private.notification_preferences $$, array[1], 'the first save is version 1');
select lives_ok(
  $$ update app_private.notification_preferences set quiet_hours_enabled = false where user_id = auth.uid() $$,
  'the owner replaces their document'
);
select results_eq($$ select version from app_private.notification_preferences $$, array[2], 'every update bumps the version');
select throws_ok(
  $$ update app_private.notification_preferences set version = 1 where user_id = auth.uid() $$,
  '42501', null, 'the owner cannot set the version'
);
select throws_ok(
  $$ update app_private.notification_preferences set categories = categories || '{"marketing": {"push": true, "email": true, "in_app": true}}' where user_id = auth.uid() $$,
  '23514', null, 'an undeclared category is refused by the database'
);
select throws_ok(
  $$ update app_private.notification_preferences set categories = jsonb_set(categories, '{reminders,sms}', 'true') where user_id = auth.uid() $$,
  '23514', null, 'an undeclared channel is refused by the database'
);
select throws_ok(
  $$ update app_private.notification_preferences set categories = jsonb_set(categories, '{reminders,push}', '"yes"') where user_id = auth.uid() $$,
  '23514', null, 'a non-boolean channel is refused by the database'
);
select throws_ok(
  $$ update app_private.notification_preferences set categories = jsonb_set(categories, '{security}', '{"push": false, "email": false, "in_app": false}') where user_id = auth.uid() $$,
  '23514', null, 'the required category off on every channel is refused by the database'
);
select throws_ok(
  $$ update app_private.notification_preferences set categories = categories - 'security' where user_id = auth.uid() $$,
  '23514', null, 'the required category cannot be left out'
);
select throws_ok(
  $$ update app_private.notification_preferences set quiet_hours_start = '24:00' where user_id = auth.uid() $$,
  '23514', null, 'a time that is not HH:MM is refused'
);
select throws_ok(
  $$ update app_private.notification_preferences set quiet_hours_timezone = '+01:00' where user_id = auth.uid() $$,
  '23514', null, 'a time zone that is not shaped like an IANA name is refused'
);
select throws_ok(
  $$ update app_private.notification_preferences set quiet_hours_enabled = true, quiet_hours_end = quiet_hours_start where user_id = auth.uid() $$,
  '23514', null, 'enabled quiet hours cannot start and end at the same minute'
);
select throws_ok(
  $$ delete from app_private.notification_preferences where user_id = auth.uid() $$,
  '42501', null, 'a user cannot delete their document (PUT replaces it)'
);
select tests.clear_authentication();

-- --------------------------------------------------------- another user
select tests.authenticate_as('prefs_other');
select is_empty($$ select 1 from app_private.notification_preferences $$, 'another user cannot see the owner''s document');
update app_private.notification_preferences set quiet_hours_enabled = true where user_id = tests.get_supabase_uid('prefs_owner');
select throws_ok(
  format($$ insert into app_private.notification_preferences (user_id, categories, quiet_hours_enabled, quiet_hours_start, quiet_hours_end, quiet_hours_timezone)
            select %L, categories, false, '22:00', '07:00', 'UTC' from valid_categories $$, tests.get_supabase_uid('prefs_owner')),
  '42501', null, 'another user cannot create a document for the owner'
);
select tests.clear_authentication();
select results_eq(
  $$ select version, quiet_hours_enabled from app_private.notification_preferences where user_id = tests.get_supabase_uid('prefs_owner') $$,
  $$ values (2, false) $$,
  'another user''s update changed nothing'
);

-- ------------------------------------------------------------------ anon
select tests.authenticate_as_anon();
select throws_ok($$ select * from app_private.notification_preferences $$, '42501', null, 'anon cannot read preferences');
select tests.clear_authentication();

-- ---------------------------------------------------------- service role
select tests.authenticate_as_service_role();
select results_eq(
  $$ select count(*)::int from app_private.notification_preferences where user_id = tests.get_supabase_uid('prefs_owner') $$,
  array[1], 'the service role reads every document'
);
select throws_ok($$ update app_private.notification_preferences set quiet_hours_enabled = true $$, '42501', null, 'the service role cannot change preferences');
select tests.clear_authentication();

-- --------------------------------------------------- function privileges
select ok(
  has_function_privilege('authenticated', 'app_private.notification_categories_are_valid(jsonb)', 'execute')
  and has_function_privilege('authenticated', 'app_private.notification_category_names()', 'execute')
  and has_function_privilege('authenticated', 'app_private.required_notification_categories()', 'execute')
  and has_function_privilege('authenticated', 'app_private.notification_channel_names()', 'execute'),
  'the check functions are executable by authenticated (the check constraint runs as the writer)'
);
select ok(
  not has_function_privilege('anon', 'app_private.notification_categories_are_valid(jsonb)', 'execute')
  and not has_function_privilege('anon', 'app_private.notification_category_names()', 'execute')
  and not has_function_privilege('anon', 'app_private.required_notification_categories()', 'execute')
  and not has_function_privilege('anon', 'app_private.notification_channel_names()', 'execute')
  and not has_function_privilege('service_role', 'app_private.notification_categories_are_valid(jsonb)', 'execute'),
  'the check functions are not executable by anon or the service role'
);
select ok(
  not has_function_privilege('anon', 'app_private.maintain_notification_preference_version()', 'execute')
  and not has_function_privilege('authenticated', 'app_private.maintain_notification_preference_version()', 'execute')
  and not has_function_privilege('service_role', 'app_private.maintain_notification_preference_version()', 'execute'),
  'maintain_notification_preference_version(): no API role may execute it (trigger only)'
);
select is(
  app_private.notification_categories_are_valid((select categories from valid_categories)),
  true,
  'the check accepts a complete, valid document'
);

select * from finish();
rollback;

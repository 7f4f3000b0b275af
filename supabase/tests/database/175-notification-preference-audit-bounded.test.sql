-- A user's notification preference audit trail keeps their newest
-- app_private.notification_preference_audit_kept() (1,000) entries (migration
-- 20261128010400): the change that appends one more deletes the oldest, in its
-- own transaction, whoever makes it. The append-only trigger lets exactly that
-- delete through (and the erasure of a deleted user, pgTAP 303): a delete of
-- one of the newest 1,000, an update and a truncate are still refused, for the
-- table owner and a superuser too.
begin;
select plan(17);

do $$ begin
  perform tests.create_supabase_user('bounded_busy');
  perform tests.create_supabase_user('bounded_other');
end $$;

-- Entry counts and versions of a user's trail.
create function pg_temp.trail(p_user text) returns table (entries integer, oldest integer, newest integer) language sql as $$
  select count(*)::integer, min(new_version), max(new_version)
    from app_private.notification_preference_audit where user_id = tests.get_supabase_uid(p_user)
$$;
-- p_count changes of the caller's preferences, as PUTs make them (the first creates the row).
create function pg_temp.changes(p_count integer) returns void language plpgsql as $$
begin
  insert into app_private.notification_preferences (user_id, categories, quiet_hours_enabled, quiet_hours_start, quiet_hours_end, quiet_hours_timezone)
  values (auth.uid(), '{"security": {"push": true, "email": true, "in_app": true}}', false, '22:00', '07:00', 'UTC')
  on conflict (user_id) do update set quiet_hours_enabled = not excluded.quiet_hours_enabled;
  for i in 2..p_count loop
    update app_private.notification_preferences set quiet_hours_enabled = not quiet_hours_enabled where user_id = auth.uid();
  end loop;
end;
$$;

-- ------------------------------------------------------------ the bound
select is(app_private.notification_preference_audit_kept(), 1000, 'a user keeps 1,000 audit entries');
select ok(
  not has_function_privilege('anon', 'app_private.prune_notification_preference_audit()', 'execute')
  and not has_function_privilege('authenticated', 'app_private.prune_notification_preference_audit()', 'execute')
  and not has_function_privilege('service_role', 'app_private.prune_notification_preference_audit()', 'execute')
  and not has_function_privilege('authenticated', 'app_private.notification_preference_audit_kept()', 'execute')
  and not has_function_privilege('service_role', 'app_private.notification_preference_audit_kept()', 'execute')
  and not has_function_privilege('authenticated', 'app_private.notification_preference_audit_oldest_kept(uuid)', 'execute')
  and not has_function_privilege('service_role', 'app_private.notification_preference_audit_oldest_kept(uuid)', 'execute'),
  'no API role may call the pruning trigger function or its helpers'
);
select is(
  (select array[prosecdef::text, array_to_string(proconfig, ',')] from pg_proc where oid = 'app_private.prune_notification_preference_audit()'::regprocedure),
  array['true', 'search_path=""'],
  'prune_notification_preference_audit is security definer with an empty search_path'
);

select tests.authenticate_as('bounded_other');
select pg_temp.changes(3);
select tests.clear_authentication();

select tests.authenticate_as('bounded_busy');
select lives_ok($$ select pg_temp.changes(1000) $$, '1,000 changes, as the user');
select tests.clear_authentication();
select results_eq($$ select * from pg_temp.trail('bounded_busy') $$, $$ values (1000, 1, 1000) $$, 'all 1,000 kept');

select tests.authenticate_as('bounded_busy');
select lives_ok($$ select pg_temp.changes(5) $$, '5 more');
select tests.clear_authentication();
select results_eq($$ select * from pg_temp.trail('bounded_busy') $$, $$ values (1000, 6, 1005) $$,
  'the newest 1,000 are kept: the 5 oldest went with the changes that passed the bound');
select results_eq($$ select * from pg_temp.trail('bounded_other') $$, $$ values (3, 1, 3) $$, 'another user''s trail is untouched');

-- An entry the owner writes itself is bounded too.
insert into app_private.notification_preference_audit (user_id, changed_at, new_version, new_document)
values (tests.get_supabase_uid('bounded_busy'), now(), 1006, '{}');
select results_eq($$ select * from pg_temp.trail('bounded_busy') $$, $$ values (1000, 7, 1006) $$,
  'the bound holds however an entry is inserted');

-- --------------------------------------- other deletes are still refused
do $$ begin
  perform set_config('role', (select tableowner from pg_tables where schemaname = 'app_private' and tablename = 'notification_preference_audit'), true);
end $$;
select throws_ok(
  $$ delete from app_private.notification_preference_audit
      where user_id = tests.get_supabase_uid('bounded_busy') and new_version = 7 $$,
  '42501', 'notification preference audit rows are append-only (DELETE refused)',
  'the table owner cannot delete the oldest entry the bound keeps'
);
select throws_ok(
  $$ delete from app_private.notification_preference_audit where user_id = tests.get_supabase_uid('bounded_other') $$,
  '42501', 'notification preference audit rows are append-only (DELETE refused)',
  'nor the entries of a user under the bound'
);
select throws_ok(
  $$ update app_private.notification_preference_audit set new_document = '{}'
      where user_id = tests.get_supabase_uid('bounded_busy') and new_version = 7 $$,
  '42501', 'notification preference audit rows are append-only (UPDATE refused)',
  'nor update one'
);
select throws_ok(
  $$ truncate app_private.notification_preference_audit $$,
  '42501', 'notification preference audit rows are append-only (TRUNCATE refused)',
  'nor truncate the trail'
);
select tests.clear_authentication();
select throws_ok(
  $$ delete from app_private.notification_preference_audit where user_id = tests.get_supabase_uid('bounded_busy') $$,
  '42501', null, 'a superuser session cannot delete a user''s kept entries either'
);
select results_eq($$ select * from pg_temp.trail('bounded_busy') $$, $$ values (1000, 7, 1006) $$, 'nothing was deleted');

-- ------------------------------ the bound's delete: only past the bound
-- With the pruning trigger off (as a restore might load rows), entries
-- pile up past the bound; the owner may delete exactly those.
alter table app_private.notification_preference_audit disable trigger notification_preference_audit_bounded;
insert into app_private.notification_preference_audit (user_id, changed_at, new_version, new_document)
select tests.get_supabase_uid('bounded_busy'), now(), v, '{}' from generate_series(1007, 1009) v;
alter table app_private.notification_preference_audit enable trigger notification_preference_audit_bounded;
do $$ begin
  perform set_config('role', (select tableowner from pg_tables where schemaname = 'app_private' and tablename = 'notification_preference_audit'), true);
end $$;
select lives_ok(
  $$ delete from app_private.notification_preference_audit
      where user_id = tests.get_supabase_uid('bounded_busy') and new_version between 7 and 9 $$,
  'the entries past the bound may be deleted (what the pruning does)'
);
select tests.clear_authentication();
select results_eq($$ select * from pg_temp.trail('bounded_busy') $$, $$ values (1000, 10, 1009) $$, 'and only they went');

select * from finish();
rollback;

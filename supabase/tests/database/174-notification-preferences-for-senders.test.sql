-- What a push sender (service_role) reads to decide whether a user takes a
-- push now (migration 20261128010300, docs/devices-and-sessions.md "Sending
-- pushes"): app_private.effective_notification_preferences(user) answers as
-- GET /v1/users/me/notifications does (the defaults at version 0 for a user
-- who never saved, product_updates off by push; a category missing from a
-- saved row gets its default); app_private.in_quiet_hours(quiet_hours, at)
-- judges an instant by the clock of the quiet hours' own zone, start
-- inclusive, end exclusive, through DST gaps and overlaps. Only service_role
-- may run them.
begin;
select plan(31);

do $$ begin
  perform tests.create_supabase_user('sender_never_saved');
  perform tests.create_supabase_user('sender_saved');
  perform tests.create_supabase_user('sender_older_row');
end $$;

-- ------------------------------------------------------------ privileges
select ok(
  not has_function_privilege('anon', 'app_private.effective_notification_preferences(uuid)', 'execute')
  and not has_function_privilege('authenticated', 'app_private.effective_notification_preferences(uuid)', 'execute')
  and has_function_privilege('service_role', 'app_private.effective_notification_preferences(uuid)', 'execute'),
  'effective_notification_preferences(uuid): EXECUTE for service_role only'
);
select ok(
  not has_function_privilege('anon', 'app_private.notification_preference_defaults()', 'execute')
  and not has_function_privilege('authenticated', 'app_private.notification_preference_defaults()', 'execute')
  and has_function_privilege('service_role', 'app_private.notification_preference_defaults()', 'execute'),
  'notification_preference_defaults(): EXECUTE for service_role only'
);
select ok(
  not has_function_privilege('anon', 'app_private.in_quiet_hours(jsonb, timestamptz)', 'execute')
  and not has_function_privilege('authenticated', 'app_private.in_quiet_hours(jsonb, timestamptz)', 'execute')
  and has_function_privilege('service_role', 'app_private.in_quiet_hours(jsonb, timestamptz)', 'execute'),
  'in_quiet_hours(jsonb, timestamptz): EXECUTE for service_role only'
);
select is(
  (select array_agg(array[p.proname::text, p.prosecdef::text, array_to_string(p.proconfig, ',')] order by p.proname)
     from pg_proc p
    where p.oid in ('app_private.effective_notification_preferences(uuid)'::regprocedure,
                    'app_private.notification_preference_defaults()'::regprocedure,
                    'app_private.in_quiet_hours(jsonb, timestamptz)'::regprocedure)),
  array[['effective_notification_preferences', 'false', 'search_path=""'],
        ['in_quiet_hours', 'false', 'search_path=""'],
        ['notification_preference_defaults', 'false', 'search_path=""']],
  'all three are security invoker with an empty search_path: they bypass nothing'
);

select tests.authenticate_as('sender_never_saved');
select throws_ok(
  $$ select * from app_private.effective_notification_preferences(auth.uid()) $$,
  '42501', null, 'a user cannot call it, not even for themselves'
);
select tests.clear_authentication();
select tests.authenticate_as_anon();
select throws_ok(
  $$ select * from app_private.effective_notification_preferences('00000000-0000-4000-8000-000000000174') $$,
  '42501', null, 'anon cannot call it'
);
select tests.clear_authentication();

-- ------------------------------------------------------------ the defaults
select is(
  (select array_agg(k order by k) from jsonb_object_keys(app_private.notification_preference_defaults() -> 'categories') k),
  (select array_agg(c order by c) from unnest(app_private.notification_category_names()) c),
  'the defaults name every declared category and no other'
);
select ok(
  app_private.notification_categories_are_valid(app_private.notification_preference_defaults() -> 'categories'),
  'the defaults pass the table''s own check (every channel, required categories on)'
);

-- ---------------------------------------------- as a sender, three users
insert into app_private.notification_preferences (user_id, categories, quiet_hours_enabled, quiet_hours_start, quiet_hours_end, quiet_hours_timezone)
values (tests.get_supabase_uid('sender_saved'),
        '{"security": {"push": true, "email": false, "in_app": false},
          "sync_conflicts": {"push": false, "email": false, "in_app": true},
          "reminders": {"push": false, "email": true, "in_app": true},
          "product_updates": {"push": true, "email": false, "in_app": true}}',
        true, '22:30', '06:45', 'Europe/Paris'),
       -- Saved before product_updates was declared (the check takes a row without it).
       (tests.get_supabase_uid('sender_older_row'),
        '{"security": {"push": true, "email": true, "in_app": true},
          "sync_conflicts": {"push": true, "email": false, "in_app": true},
          "reminders": {"push": false, "email": false, "in_app": true}}',
        false, '23:00', '07:00', 'Asia/Tokyo');

-- Quiet hours from their parts, judged at p_at.
create function pg_temp.quiet(p_start text, p_end text, p_zone text, p_at timestamptz, p_enabled boolean default true)
returns boolean language sql as $$
  select app_private.in_quiet_hours(jsonb_build_object('enabled', p_enabled, 'start', p_start, 'end', p_end, 'timezone', p_zone), p_at)
$$;

select tests.authenticate_as_service_role();
select results_eq(
  $$ select version, updated_at, categories, quiet_hours
       from app_private.effective_notification_preferences(tests.get_supabase_uid('sender_never_saved')) $$,
  $$ values (0, null::timestamptz,
             '{"security":        {"push": true,  "email": true,  "in_app": true},
               "sync_conflicts":  {"push": true,  "email": false, "in_app": true},
               "reminders":       {"push": true,  "email": false, "in_app": true},
               "product_updates": {"push": false, "email": false, "in_app": true}}'::jsonb,
             '{"enabled": false, "start": "22:00", "end": "07:00", "timezone": "UTC"}'::jsonb) $$,
  'a user who never saved: version 0, no updated_at, the defaults of docs/notification-preferences.md (product_updates not by push: opt-in)'
);
select is(
  (select (categories -> 'product_updates' ->> 'push')::boolean
     from app_private.effective_notification_preferences(tests.get_supabase_uid('sender_never_saved'))),
  false,
  'so a sender reading it pushes no product_updates to a user who never opted in'
);
select results_eq(
  $$ select e.version, e.updated_at, e.categories, e.quiet_hours
       from app_private.effective_notification_preferences(tests.get_supabase_uid('sender_saved')) e $$,
  $$ select p.version, p.updated_at, p.categories,
            '{"enabled": true, "start": "22:30", "end": "06:45", "timezone": "Europe/Paris"}'::jsonb
       from app_private.notification_preferences p where p.user_id = tests.get_supabase_uid('sender_saved') $$,
  'a user who saved: their document, version and time'
);
select is(
  (select categories from app_private.effective_notification_preferences(tests.get_supabase_uid('sender_older_row'))),
  '{"security":        {"push": true,  "email": true,  "in_app": true},
    "sync_conflicts":  {"push": true,  "email": false, "in_app": true},
    "reminders":       {"push": false, "email": false, "in_app": true},
    "product_updates": {"push": false, "email": false, "in_app": true}}'::jsonb,
  'a row saved before a category was declared: its choices, and that category''s default'
);
select is(
  (select count(*)::int from app_private.effective_notification_preferences('00000000-0000-4000-8000-000000000174')),
  1, 'one row for any id (the defaults)'
);

-- ------------------------------------------------------------ quiet hours
select is(pg_temp.quiet('22:00', '07:00', 'UTC', '2026-06-01 23:00+00', false), false, 'disabled quiet hours hold nothing');
select is(pg_temp.quiet('22:00', '07:00', 'UTC', '2026-06-01 22:00+00'), true, 'start is inclusive');
select is(pg_temp.quiet('22:00', '07:00', 'UTC', '2026-06-02 06:59:59.999+00'), true, 'just before end is quiet');
select is(pg_temp.quiet('22:00', '07:00', 'UTC', '2026-06-02 07:00+00'), false, 'end is exclusive');
select is(pg_temp.quiet('22:00', '07:00', 'UTC', '2026-06-01 21:59:59+00'), false, 'before start is not quiet');
select is(pg_temp.quiet('09:00', '17:00', 'UTC', '2026-06-01 12:00+00'), true, 'a window within a day');
select is(pg_temp.quiet('09:00', '17:00', 'UTC', '2026-06-01 18:00+00'), false, 'outside a window within a day');
select is(pg_temp.quiet('22:00', '07:00', 'Asia/Tokyo', '2026-06-01 14:00+00'), true,
  'the quiet hours'' own zone decides: 14:00 UTC is 23:00 in Tokyo');
select is(pg_temp.quiet('22:00', '07:00', 'America/New_York', '2026-06-01 14:00+00'), false,
  'and 10:00 in New York');
-- America/New_York, 2026-03-08: 01:59:59 EST is followed by 03:00 EDT (07:00 UTC).
select is(pg_temp.quiet('02:30', '07:00', 'America/New_York', '2026-03-08 06:59:59+00'), false, 'DST gap: before the jump the clock shows 01:59, before a start of 02:30');
select is(pg_temp.quiet('02:30', '07:00', 'America/New_York', '2026-03-08 07:00+00'), true, 'a start the clock skips takes effect at the jump (03:00)');
select is(pg_temp.quiet('22:00', '02:30', 'America/New_York', '2026-03-08 06:59:59+00'), true, 'an end the clock skips: quiet up to the jump');
select is(pg_temp.quiet('22:00', '02:30', 'America/New_York', '2026-03-08 07:00+00'), false, 'and not from it');
-- 2026-11-01: 01:59:59 EDT (05:59:59 UTC) is followed by 01:00 EST (06:00 UTC).
select is(pg_temp.quiet('22:00', '01:30', 'America/New_York', '2026-11-01 05:15+00'), true, 'DST overlap: 01:15 the first time is quiet');
select is(pg_temp.quiet('22:00', '01:30', 'America/New_York', '2026-11-01 05:45+00'), false, '01:45 the first time is not');
select is(pg_temp.quiet('22:00', '01:30', 'America/New_York', '2026-11-01 06:15+00'), true, '01:15 the second time is quiet again: judged by the clock each time');
select is(pg_temp.quiet('22:00', '07:00', 'Mars/Olympus_Mons', '2026-06-01 23:00+00'), null::boolean,
  'a zone the database''s tz data lacks: null (unknown), so `not in_quiet_hours(…)` sends nothing');
select is(
  app_private.in_quiet_hours(
    (select quiet_hours from app_private.effective_notification_preferences(tests.get_supabase_uid('sender_saved'))),
    '2026-06-01 21:00+00'),
  true,
  'it reads what effective_notification_preferences answers: 23:00 in Paris is in 22:30-06:45'
);
select tests.clear_authentication();

select * from finish();
rollback;

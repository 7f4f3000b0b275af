-- What: app_private.notification_preferences, one versioned document per
-- user: categories x channels (push, email, in_app) and quiet hours.
-- Why: GET/PUT /v1/users/me/notifications (api-v1.md). A user who never saved
-- preferences has no row; the api function answers with the defaults
-- (version 0). Every write bumps `version` (trigger), which the api function
-- serves as the ETag and compares with If-Match (412 when stale).
--
-- The categories and channels are declared once in TypeScript
-- (functions/_shared/notification-categories.ts, with defaults and which are
-- required). The database keeps its own constant lists below for the check
-- constraint; tests/integration/notifications.test.ts proves both agree.
-- Time zones are validated by the api function with Intl; the database checks
-- their shape only (Postgres' and the runtime's tz databases differ in aliases).
--
-- rollback:
--   drop table if exists app_private.notification_preferences;
--   drop function if exists app_private.maintain_notification_preference_version();
--   drop function if exists app_private.notification_categories_are_valid(jsonb);
--   drop function if exists app_private.required_notification_categories();
--   drop function if exists app_private.notification_channel_names();
--   drop function if exists app_private.notification_category_names();

-- --------------------------------------------------------- declared lists
create function app_private.notification_category_names()
returns text[]
language sql
immutable
parallel safe
security invoker
set search_path = ''
as $$
  select array['security', 'sync_conflicts', 'reminders', 'product_updates']::text[]
$$;
comment on function app_private.notification_category_names() is
  'Notification categories the database accepts; must equal the keys of NOTIFICATION_CATEGORIES in functions/_shared/notification-categories.ts (tested).';

create function app_private.required_notification_categories()
returns text[]
language sql
immutable
parallel safe
security invoker
set search_path = ''
as $$
  select array['security']::text[]
$$;
comment on function app_private.required_notification_categories() is
  'Categories that must stay on for at least one channel; must equal the required ones in functions/_shared/notification-categories.ts (tested).';

create function app_private.notification_channel_names()
returns text[]
language sql
immutable
parallel safe
security invoker
set search_path = ''
as $$
  select array['push', 'email', 'in_app']::text[]
$$;
comment on function app_private.notification_channel_names() is
  'Notification channels; must equal NOTIFICATION_CHANNELS in functions/_shared/notification-categories.ts (tested).';

create function app_private.notification_categories_are_valid(p_categories jsonb)
returns boolean
language plpgsql
immutable
security invoker
set search_path = ''
as $$
declare
  category text;
  settings jsonb;
  channels constant text[] := app_private.notification_channel_names();
begin
  if p_categories is null or jsonb_typeof(p_categories) <> 'object' then
    return false;
  end if;
  for category, settings in select e.key, e.value from jsonb_each(p_categories) e loop
    if not (category = any (app_private.notification_category_names())) or jsonb_typeof(settings) <> 'object' then
      return false;
    end if;
    -- Exactly the declared channels, each a boolean.
    if (select array_agg(k order by k) from jsonb_object_keys(settings) k)
       is distinct from (select array_agg(c order by c) from unnest(channels) c) then
      return false;
    end if;
    if exists (select 1 from jsonb_each(settings) v where jsonb_typeof(v.value) <> 'boolean') then
      return false;
    end if;
  end loop;
  -- A required category is present and on for at least one channel.
  return not exists (
    select 1
    from unnest(app_private.required_notification_categories()) r
    where not (p_categories ? r)
       or not exists (select 1 from jsonb_each(p_categories -> r) v where v.value = 'true'::jsonb)
  );
end
$$;
comment on function app_private.notification_categories_are_valid(jsonb) is
  'Check of notification_preferences.categories: an object whose keys are declared categories, each an object of exactly the declared channels with boolean values, every required category present with at least one channel on.';

-- Check constraints call these as the writing role (authenticated, via the api function).
revoke all on function app_private.notification_category_names() from public, anon, authenticated, service_role;
revoke all on function app_private.required_notification_categories() from public, anon, authenticated, service_role;
revoke all on function app_private.notification_channel_names() from public, anon, authenticated, service_role;
revoke all on function app_private.notification_categories_are_valid(jsonb) from public, anon, authenticated, service_role;
grant execute on function app_private.notification_category_names() to authenticated;
grant execute on function app_private.required_notification_categories() to authenticated;
grant execute on function app_private.notification_channel_names() to authenticated;
grant execute on function app_private.notification_categories_are_valid(jsonb) to authenticated;

-- ------------------------------------------------------------------- table
create table app_private.notification_preferences (
  user_id uuid primary key references auth.users (id) on delete cascade,
  version integer not null default 1 constraint notification_preferences_version_positive check (version >= 1),
  categories jsonb not null
    constraint notification_preferences_categories_valid check (app_private.notification_categories_are_valid(categories)),
  quiet_hours_enabled boolean not null,
  quiet_hours_start text not null
    constraint notification_preferences_quiet_hours_start_hhmm check (quiet_hours_start ~ '^([01][0-9]|2[0-3]):[0-5][0-9]$'),
  quiet_hours_end text not null
    constraint notification_preferences_quiet_hours_end_hhmm check (quiet_hours_end ~ '^([01][0-9]|2[0-3]):[0-5][0-9]$'),
  quiet_hours_timezone text not null
    constraint notification_preferences_quiet_hours_timezone_shape check (
      char_length(quiet_hours_timezone) <= 64 and quiet_hours_timezone ~ '^[A-Za-z][A-Za-z0-9_+-]*(/[A-Za-z0-9_+-]+)*$'
    ),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  constraint notification_preferences_quiet_hours_not_empty check (not quiet_hours_enabled or quiet_hours_start <> quiet_hours_end)
);
comment on table app_private.notification_preferences is
  'One notification preference document per user (GET/PUT /v1/users/me/notifications). No row = the defaults of functions/_shared/notification-categories.ts, served as version 0. Every change is appended to notification_preference_audit.';
comment on column app_private.notification_preferences.version is 'Starts at 1, +1 on every update (trigger); the ETag of the document.';
comment on column app_private.notification_preferences.categories is
  'Per category the channels {"push": bool, "email": bool, "in_app": bool}; the api function stores every declared category.';
comment on column app_private.notification_preferences.quiet_hours_start is 'HH:MM (24-hour) local time in quiet_hours_timezone; may be later than end (the window spans midnight).';
comment on column app_private.notification_preferences.quiet_hours_timezone is 'IANA time zone of the quiet hours (validated with Intl by the api function).';

alter table app_private.notification_preferences enable row level security;
revoke all on app_private.notification_preferences from public, anon, authenticated, service_role;
grant select on app_private.notification_preferences to authenticated, service_role;
grant insert (user_id, categories, quiet_hours_enabled, quiet_hours_start, quiet_hours_end, quiet_hours_timezone)
  on app_private.notification_preferences to authenticated;
grant update (categories, quiet_hours_enabled, quiet_hours_start, quiet_hours_end, quiet_hours_timezone)
  on app_private.notification_preferences to authenticated;

create policy "Users can read their own notification preferences"
  on app_private.notification_preferences for select to authenticated
  using (user_id = (select auth.uid()));
comment on policy "Users can read their own notification preferences" on app_private.notification_preferences is
  'A user reads only their own preferences.';

create policy "Users can create their own notification preferences"
  on app_private.notification_preferences for insert to authenticated
  with check (user_id = (select auth.uid()));
comment on policy "Users can create their own notification preferences" on app_private.notification_preferences is
  'The first PUT of a user creates their own document, never another user''s.';

create policy "Users can update their own notification preferences"
  on app_private.notification_preferences for update to authenticated
  using (user_id = (select auth.uid()))
  with check (user_id = (select auth.uid()));
comment on policy "Users can update their own notification preferences" on app_private.notification_preferences is
  'A user replaces only their own document.';

create function app_private.maintain_notification_preference_version()
returns trigger
language plpgsql
security invoker
set search_path = ''
as $$
begin
  if tg_op = 'INSERT' then
    new.version := 1;
  else
    new.user_id := old.user_id;
    new.created_at := old.created_at;
    new.version := old.version + 1;
    new.updated_at := now();
  end if;
  return new;
end
$$;
comment on function app_private.maintain_notification_preference_version() is
  'BEFORE INSERT/UPDATE trigger of notification_preferences: version 1 on insert, +1 on every update, updated_at stamped; the client never sets them.';
revoke all on function app_private.maintain_notification_preference_version() from public, anon, authenticated, service_role;

create trigger notification_preferences_maintain_version
  before insert or update on app_private.notification_preferences
  for each row execute function app_private.maintain_notification_preference_version();

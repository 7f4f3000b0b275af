-- What: what a push sender (service_role, in SQL) needs to decide what a user
-- takes, in the database:
--   * app_private.notification_preference_defaults(): the document of a user
--     who never saved ({categories, quiet_hours}), a constant copy of the
--     defaults declared in functions/_shared/notification-categories.ts, kept
--     equal to them as the category lists are (tested);
--   * app_private.effective_notification_preferences(p_user_id): the user's
--     document as GET /v1/users/me/notifications answers it (version 0 and the
--     defaults without a row; a category declared after the row was saved gets
--     its default);
--   * app_private.in_quiet_hours(p_quiet_hours, p_at): whether an instant is
--     inside quiet hours, by the clock of the quiet hours' own time zone, start
--     inclusive, end exclusive (docs/devices-and-sessions.md, "Sending pushes").
-- EXECUTE for service_role only; all three are security invoker.
-- notification_preference_document(row) gets EXECUTE for service_role too
-- (the sender's function builds the stored document with it).
-- Why: docs/devices-and-sessions.md sent push senders to
-- app_private.push_targets and, for categories and quiet hours, to a page that
-- describes only GET/PUT with the user's token. A user who never saved has no
-- row, so a sender in SQL read NULL, and the defaults (product_updates push
-- off: opt-in) existed only in TypeScript: it would push promotional
-- notifications to users who never opted in, and miss a category added after a
-- row was saved.
-- Not done: nothing enforces the preferences on a sender (tidesync sends no
-- pushes itself); the device's own timezone (push_targets.timezone) is not used
-- for quiet hours (decision, documented). A zone the API took through Intl but
-- the database's tz data lacks answers null from in_quiet_hours.
-- Tests: pgTAP 174-notification-preferences-for-senders;
-- tests/integration/notification-preferences-for-senders.test.ts (the function
-- against GET for a never-saved user, a saved one and a row missing a later
-- category; the documented query run as written); notifications.test.ts (the
-- defaults equal TypeScript's).
-- Down step: supabase/rollbacks/20261128010300_notification_preferences_for_senders.down.sql

create function app_private.notification_preference_defaults()
returns jsonb
language sql
immutable
parallel safe
set search_path = ''
as $$
  select '{
    "categories": {
      "security":        {"push": true,  "email": true,  "in_app": true},
      "sync_conflicts":  {"push": true,  "email": false, "in_app": true},
      "reminders":       {"push": true,  "email": false, "in_app": true},
      "product_updates": {"push": false, "email": false, "in_app": true}
    },
    "quiet_hours": {"enabled": false, "start": "22:00", "end": "07:00", "timezone": "UTC"}
  }'::jsonb
$$;
comment on function app_private.notification_preference_defaults() is
  'The notification preferences of a user who never saved any ({categories, quiet_hours}); must equal the defaults of NOTIFICATION_CATEGORIES and DEFAULT_QUIET_HOURS in functions/_shared/notification-categories.ts (tested). Replace it in the migration that adds a category.';
revoke all on function app_private.notification_preference_defaults() from public, anon, authenticated, service_role;
grant execute on function app_private.notification_preference_defaults() to service_role;

create function app_private.effective_notification_preferences(p_user_id uuid)
returns table (version integer, updated_at timestamptz, categories jsonb, quiet_hours jsonb)
language sql
stable
set search_path = ''
as $$
  -- GET's rule (functions/api/notifications/preference-store.ts): no row is the
  -- defaults at version 0; a stored category replaces its default whole, and a
  -- category the row lacks (declared after it was saved) keeps its default.
  select coalesce(p.version, 0),
         p.updated_at,
         (d.document -> 'categories') || coalesce(p.document -> 'categories', '{}'::jsonb),
         coalesce(p.document -> 'quiet_hours', d.document -> 'quiet_hours')
    from (select app_private.notification_preference_defaults() as document) d
    left join (select s.version, s.updated_at, app_private.notification_preference_document(s) as document
                 from app_private.notification_preferences s
                where s.user_id = p_user_id) p on true
$$;
comment on function app_private.effective_notification_preferences(p_user_id uuid) is
  'A user''s notification preferences as GET /v1/users/me/notifications answers them: version (0 without a row), updated_at (null without a row), categories (every declared category, each with every channel; defaults filled in), quiet_hours ({enabled, start, end, timezone}). What push senders read (service_role); one row, the defaults for a user without preferences (also for an id that is no user). See docs/devices-and-sessions.md, "Sending pushes".';
revoke all on function app_private.effective_notification_preferences(uuid) from public, anon, authenticated, service_role;
grant execute on function app_private.effective_notification_preferences(uuid) to service_role;

grant execute on function app_private.notification_preference_document(app_private.notification_preferences) to service_role;

create function app_private.in_quiet_hours(p_quiet_hours jsonb, p_at timestamptz)
returns boolean
language plpgsql
stable
set search_path = ''
as $$
declare
  v_start constant time := (p_quiet_hours ->> 'start')::time;
  v_end constant time := (p_quiet_hours ->> 'end')::time;
  v_clock time;
begin
  if not coalesce((p_quiet_hours ->> 'enabled')::boolean, false) then
    return false;
  end if;
  -- What the clock shows at p_at in the quiet hours' own zone: a time the
  -- clock skips (a DST gap) is never shown, so a start or end there takes
  -- effect when the clock jumps past it; a time shown twice (an overlap) is
  -- judged each time it is shown.
  begin
    v_clock := (p_at at time zone (p_quiet_hours ->> 'timezone'))::time;
  exception when invalid_parameter_value then
    return null; -- a zone this database's tz data lacks: unknown, not "not quiet"
  end;
  if v_start < v_end then
    return v_clock >= v_start and v_clock < v_end;
  end if;
  return v_clock >= v_start or v_clock < v_end; -- the window spans midnight
end;
$$;
comment on function app_private.in_quiet_hours(p_quiet_hours jsonb, p_at timestamptz) is
  'Whether p_at is inside the quiet hours p_quiet_hours ({enabled, start, end, timezone}, as effective_notification_preferences answers them): enabled, and the time of day the clock shows at p_at in the quiet hours'' own timezone is at or after start and before end (end exclusive; start after end spans midnight). false when disabled; null when the database''s tz data lacks the zone. See docs/devices-and-sessions.md, "Sending pushes".';
revoke all on function app_private.in_quiet_hours(jsonb, timestamptz) from public, anon, authenticated, service_role;
grant execute on function app_private.in_quiet_hours(jsonb, timestamptz) to service_role;

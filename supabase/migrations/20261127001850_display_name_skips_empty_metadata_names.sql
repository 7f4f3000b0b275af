-- What: a new user's display name is the first of the user metadata's
-- display_name, full_name and name that is a JSON string with something left
-- once trimmed (app_private.trim_display_name), cut to 80 characters; null
-- when none is.
-- Why: 20261127000110 took coalesce(display_name, full_name, name) as text:
-- an empty or whitespace-only display_name hid the full_name or name after it
-- ({"display_name": "", "full_name": "Ada Lovelace"} gave no name), and a
-- number or an object was taken as its JSON text ({"display_name": {"a": 1}}
-- gave the name '{"a": 1}').
-- The name is now trimmed before the cut too, so leading whitespace no longer
-- takes part of the 80 characters.
-- Test: tests/integration/display-name-rule.test.ts ("the first sign-up
-- metadata name that is a non-blank string").
-- Rollback: supabase/rollbacks/20261127001850_display_name_skips_empty_metadata_names.down.sql

create or replace function app_private.display_name_from_user_metadata(meta jsonb)
returns text
language sql
immutable
security invoker
set search_path = ''
as $$
  select nullif(app_private.trim_display_name(left(app_private.trim_display_name(meta ->> k.key), 80)), '')
  from unnest(array['display_name', 'full_name', 'name']) with ordinality as k(key, nth)
  where jsonb_typeof(meta -> k.key) = 'string'
    and app_private.trim_display_name(meta ->> k.key) <> ''
  order by k.nth
  limit 1
$$;
comment on function app_private.display_name_from_user_metadata(jsonb) is
  'The initial display name of a new user: the first of user metadata display_name, full_name (OAuth providers) and name that is a JSON string not blank once trimmed by app_private.trim_display_name, trimmed and cut to 80 characters; null when none.';

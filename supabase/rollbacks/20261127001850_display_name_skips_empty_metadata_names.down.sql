-- Down step of 20261127001850_display_name_skips_empty_metadata_names.sql: the
-- sign-up name of 20261127000110 again (coalesce of the three keys as text).
create or replace function app_private.display_name_from_user_metadata(meta jsonb)
returns text
language sql
immutable
security invoker
set search_path = ''
as $$
  select nullif(app_private.trim_display_name(left(coalesce(meta ->> 'display_name', meta ->> 'full_name', meta ->> 'name', ''), 80)), '')
$$;
comment on function app_private.display_name_from_user_metadata(jsonb) is
  'The initial display name of a new user: user metadata display_name, full_name (OAuth providers) or name, cut to 80 characters and trimmed by app_private.trim_display_name; null when none.';

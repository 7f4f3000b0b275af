-- Down step of 20261127000110_display_name_trims_unicode_whitespace.sql: the
-- constraint and the sign-up trigger's name of 20261122020100 again (btrim:
-- spaces only). Names the migration trimmed stay trimmed (they satisfy both).
create or replace function app_private.display_name_from_user_metadata(meta jsonb)
returns text
language sql
immutable
security invoker
set search_path = ''
as $$
  select nullif(btrim(left(coalesce(meta ->> 'display_name', meta ->> 'full_name', meta ->> 'name', ''), 80)), '')
$$;
comment on function app_private.display_name_from_user_metadata(jsonb) is
  'The initial display name of a new user: user metadata display_name, full_name (OAuth providers) or name, trimmed to 80 characters; null when none.';

alter table public.profiles
  drop constraint profiles_display_name_shape,
  add constraint profiles_display_name_shape check (
    display_name is null
    or (char_length(display_name) between 1 and 80 and display_name = btrim(display_name))
  );
comment on column public.profiles.display_name is 'Name shown in the app; 1-80 characters without surrounding spaces, or null.';

drop function app_private.trim_display_name(text);

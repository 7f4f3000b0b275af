-- What: one rule for display_name, held by the database: no surrounding
-- whitespace, where whitespace is exactly what String.prototype.trim removes
-- (tab, line breaks, space, NBSP, U+1680, U+2000-U+200A, U+2028/9, U+202F,
-- U+205F, U+3000, U+FEFF), 1-80 characters.
-- Why: the check constraint and the sign-up trigger used btrim (spaces only)
-- while profileUpdateSchema (functions/_shared/schemas/profile.ts) trims all
-- of those. A name written directly with supabase-js with a leading tab, NBSP,
-- ideographic space or newline was stored as is (the schema would have stored
-- it trimmed), a name of such whitespace only ("\u3000") was stored as a
-- name, and the sign-up metadata kept them too.
-- app_private.trim_display_name() is the one definition of that whitespace;
-- tests/integration/display-name-rule.test.ts proves it equals
-- String.prototype.trim's for every code point, through the schema, a direct
-- write as authenticated and the sign-up metadata.
-- Names already stored with such whitespace are trimmed (a name of whitespace
-- only becomes null), so the constraint holds for every row.
-- Rollback: supabase/rollbacks/20261127000110_display_name_trims_unicode_whitespace.down.sql
-- (the trimmed names stay trimmed).

create function app_private.trim_display_name(p_name text)
returns text
language sql
immutable
parallel safe
security invoker
set search_path = ''
as $$
  select btrim(p_name, E'\t\n\u000b\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff')
$$;
comment on function app_private.trim_display_name(text) is
  'p_name without surrounding whitespace, whitespace being exactly what JavaScript''s String.prototype.trim removes (so profileUpdateSchema and the database agree; tests/integration/display-name-rule.test.ts checks every code point). The one definition used by the profiles_display_name_shape constraint and the sign-up trigger.';
-- The check constraint calls it as the writing role (authenticated); it only
-- transforms its argument.
revoke all on function app_private.trim_display_name(text) from public, anon, authenticated, service_role;
grant execute on function app_private.trim_display_name(text) to authenticated;

update public.profiles
   set display_name = nullif(app_private.trim_display_name(display_name), '')
 where display_name <> app_private.trim_display_name(display_name);

alter table public.profiles
  drop constraint profiles_display_name_shape,
  add constraint profiles_display_name_shape check (
    display_name is null
    or (char_length(display_name) between 1 and 80 and display_name = app_private.trim_display_name(display_name))
  );
comment on column public.profiles.display_name is
  'Name shown in the app; 1-80 characters (code points) without surrounding whitespace (app_private.trim_display_name: what String.prototype.trim removes), or null.';

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

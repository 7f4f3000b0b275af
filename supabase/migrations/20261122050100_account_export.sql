-- What: app_private.my_account() and app_private.my_sessions(): the caller's
-- own account basics and session metadata, for GET /v1/users/me/export.
-- Why: the export must include what Supabase Auth holds about the user, and
-- the api function runs user work as `authenticated`, which must not read
-- auth.users or auth.sessions (a grant would expose every user's). Two narrow
-- security definer doors, as app_private.revoke_session() is: no input, only
-- rows of auth.uid(), only the columns listed (no tokens, no metadata blobs).
--
-- Down step: supabase/rollbacks/20261122050100_account_export.down.sql.

create function app_private.my_account()
returns table (id uuid, email text, phone text, created_at timestamptz, email_confirmed_at timestamptz,
               last_sign_in_at timestamptz, is_anonymous boolean)
language sql
stable
security definer
set search_path = ''
as $$
  select u.id, u.email::text, u.phone::text, u.created_at, u.email_confirmed_at, u.last_sign_in_at, u.is_anonymous
    from auth.users u
   where u.id = (select auth.uid())
$$;
comment on function app_private.my_account() is
  'The caller''s account basics from auth.users (id, email, phone, created_at, email_confirmed_at, last_sign_in_at, is_anonymous) for the data export. Security definer: authenticated cannot read auth.users. EXECUTE for authenticated only.';
revoke all on function app_private.my_account() from public, anon, authenticated, service_role;
grant execute on function app_private.my_account() to authenticated;

create function app_private.my_sessions()
returns table (id uuid, created_at timestamptz, updated_at timestamptz, aal text, not_after timestamptz,
               user_agent text, ip text)
language sql
stable
security definer
set search_path = ''
as $$
  select s.id, s.created_at, s.updated_at, s.aal::text, s.not_after, s.user_agent, host(s.ip)
    from auth.sessions s
   where s.user_id = (select auth.uid())
   order by s.created_at, s.id
$$;
comment on function app_private.my_sessions() is
  'Metadata of the caller''s live Supabase sessions (no tokens) for the data export. Security definer: authenticated cannot read auth.sessions. EXECUTE for authenticated only.';
revoke all on function app_private.my_sessions() from public, anon, authenticated, service_role;
grant execute on function app_private.my_sessions() to authenticated;

-- What: app_private.account_created_at(), the caller's auth.users.created_at
-- (security definer: authenticated cannot read auth.users; EXECUTE for
-- authenticated only).
-- Why: a pull cursor is bound to the user id, and an account deleted and
-- created again with the same id (auth.admin.createUser({ id })) is another
-- account under it: the deletion writes no access-loss entries (sync_access
-- rows go with auth.users), so a cursor of the earlier account went on and
-- its device kept the lists the earlier account was shared for ever. The page
-- statement of GET /v1/sync/changes reads this (no round trip of its own), the
-- cursor names it, and a cursor naming another answers 410 RESYNC_REQUIRED
-- (docs/sync.md, "An account deleted and created again"). pgTAP 147 pins it.
-- Down step: supabase/rollbacks/20261128003750_pull_cursor_names_the_account.down.sql

create function app_private.account_created_at()
returns timestamptz
language sql
stable
security definer
set search_path = ''
as $$
  select u.created_at from auth.users u where u.id = (select auth.uid())
$$;
comment on function app_private.account_created_at() is
  'The caller''s auth.users.created_at (null without a caller, or when their account is gone): what tells an account from an earlier one with the same id. Read by the page statement of GET /v1/sync/changes. Security definer: authenticated cannot read auth.users. EXECUTE for authenticated only.';
revoke all on function app_private.account_created_at() from public, anon, authenticated, service_role;
grant execute on function app_private.account_created_at() to authenticated;

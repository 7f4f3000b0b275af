-- What: app_private.account_created_at()'s comment named the pull's page
-- statement as its only reader; GET /v1/whoami reads it too (the client binds
-- its store to the account by it).
-- Rollback: supabase/rollbacks/20261128004800_account_created_at_comment.down.sql.

comment on function app_private.account_created_at() is
  'The caller''s auth.users.created_at (null without a caller, or when their account is gone): what tells an account from an earlier one with the same id. Read by the page statement of GET /v1/sync/changes and by GET /v1/whoami. Security definer: authenticated cannot read auth.users. EXECUTE for authenticated only.';

-- Down step of 20261128004800_account_created_at_comment: the comment
-- 20261128003750 left.

comment on function app_private.account_created_at() is
  'The caller''s auth.users.created_at (null without a caller, or when their account is gone): what tells an account from an earlier one with the same id. Read by the page statement of GET /v1/sync/changes. Security definer: authenticated cannot read auth.users. EXECUTE for authenticated only.';

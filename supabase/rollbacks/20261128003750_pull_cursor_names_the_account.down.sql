-- Down step of 20261128003750_pull_cursor_names_the_account.sql: deploy the
-- previous function first (this one's page statement calls it).
drop function app_private.account_created_at();

-- Down step of 20261122050100_account_export.sql.
drop function if exists app_private.my_sessions();
drop function if exists app_private.my_account();

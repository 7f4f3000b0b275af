-- Down step of 20261122020300_session_revocation.sql.
drop function if exists app_private.revoke_session(uuid);

-- Down step of 20261128007100_push_locks_scopes_it_writes_into.sql: the function goes (a push of
-- the code before it takes its scope rows at the write, through its foreign-key checks).
drop function app_private.lock_scopes_written_into(regclass, regclass, uuid[]);

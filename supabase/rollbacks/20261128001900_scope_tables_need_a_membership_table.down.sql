-- Down step of 20261128001900_scope_tables_need_a_membership_table.sql: a
-- scope table is synced without a membership table again; enable_sync's
-- comment as 20261128000710_deleted_scope_id_kept_for_its_members.sql wrote it.
drop trigger tidesync_scope_tables_have_members on app_private.sync_tables;
drop trigger tidesync_scope_tables_have_members on app_private.sync_memberships;
drop function app_private.refuse_scope_table_without_membership();
drop function app_private.scope_tables_without_membership();
comment on function app_private.enable_sync(regclass, name) is
  'Makes a table syncable as the collection named like the table: needs a uuid primary key `id`, a not-null uuid scope column (''id'' for a scope table such as lists) and RLS enabled. Installs the change-tracking triggers (and one refusing TRUNCATE, which they cannot see; on a scope table, tidesync_scope_history_kept: refuse_hidden_scope_history), indexes the scope column when no index starts with it (named <table>_<column>_idx, dropped again by disable_sync), and records existing rows (their creator: the table''s created_by column, when it has one and the table is no membership table; counted in that user''s usage). A membership table made syncable too (public.list_members) is registered by enable_sync_membership first. Run it in a migration, then `npm run generate`.';

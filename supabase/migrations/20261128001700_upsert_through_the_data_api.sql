-- What: authenticated may name `id` in an update of public.lists and
-- public.tasks. The sync trigger still refuses a change of it (23514, "the id
-- of a synced row cannot change"), so the grant allows only setting it to
-- itself.
-- Why: supabase-js `upsert()` (PostgREST: INSERT … ON CONFLICT (id) DO UPDATE
-- SET id = excluded.id, list_id = …, every column sent) needs UPDATE on every
-- column it sends, the primary key included, and Postgres checks that when it
-- plans the statement: without it every upsert on these tables failed 42501,
-- even of a new row. Upserts with ids the client chose are how an
-- offline-first app writes.
-- Tests: pgTAP 110-lists, 112-tasks (the grants, an upsert that inserts, one
-- that updates, an id change refused).
-- Down step: supabase/rollbacks/20261128001700_upsert_through_the_data_api.down.sql

grant update (id) on public.lists, public.tasks to authenticated;

-- Down step of 20261128001700_upsert_through_the_data_api.sql: supabase-js
-- upserts on lists and tasks fail 42501 again.
revoke update (id) on public.lists, public.tasks from authenticated;

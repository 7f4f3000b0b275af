-- Down step of 20261122060300_forget_pokes_of_deleted_users.sql (run by
-- scripts/test-migrations.ts as the owner role; see docs/versioning.md).
-- auth.users belongs to Supabase Auth: the owner may create a trigger on it but
-- not drop one by name; dropping the trigger's function with CASCADE drops it.
drop function app_private.forget_pokes_of_deleted_users() cascade;

-- Down step of 20261126001100_hand_over_lists_on_user_delete.sql.
-- auth.users belongs to Supabase Auth: the owner may create a trigger on it but
-- not drop one by name; dropping the trigger's function with CASCADE drops it.
drop function app_private.hand_over_lists_of_deleted_user() cascade;

-- Down step of 20261126002930_hand_over_lists_on_soft_delete.sql: a soft
-- delete of a user hands nothing over again. auth.users belongs to Supabase
-- Auth: the owner may create a trigger on it but not drop one by name;
-- dropping the trigger's function with CASCADE drops it.
drop function app_private.hand_over_lists_of_soft_deleted_user() cascade;

-- Down step of 20261122010100_sample_todo_app.sql.
select app_private.disable_sync('public.list_members');
select app_private.disable_sync('public.tasks');
select app_private.disable_sync('public.lists');
-- auth.users belongs to Supabase Auth: the owner may create a trigger on it but
-- not drop one by name; dropping the trigger's function with CASCADE drops it.
drop function if exists app_private.create_personal_list_for_new_user() cascade;
drop table if exists public.tasks;
drop table if exists public.list_members;
drop table if exists public.lists;
drop function if exists app_private.check_list_member_update();
drop function if exists app_private.keep_a_list_owner();
drop function if exists app_private.add_list_creator_as_owner();
drop function if exists app_private.my_list_ids(text);

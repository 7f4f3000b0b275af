-- Down step of 20261127000400_writes_judged_by_the_role_after_waits.sql: the recheck
-- triggers and their functions go; the policies alone judge a write again.
drop trigger writer_role_rechecked_on_delete on public.list_members;
drop trigger writer_role_rechecked_on_update on public.list_members;
drop function app_private.recheck_list_member_change();
drop trigger writer_role_rechecked_on_update on public.tasks;
drop trigger writer_role_rechecked_on_insert on public.tasks;
drop function app_private.recheck_write_into_list();
drop trigger writer_role_rechecked on public.lists;
drop function app_private.recheck_list_write();
drop function app_private.require_list_role(uuid[], text);

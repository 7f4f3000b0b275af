-- Down step of 20261128009900_forget_pokes_of_deleted_handed_over_lists.sql.

drop trigger unjoinable_pokes_forgotten on public.lists;
drop function app_private.forget_pokes_of_deleted_retired_lists();

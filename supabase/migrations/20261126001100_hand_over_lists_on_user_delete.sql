-- What: a BEFORE DELETE trigger on auth.users hands the deleted user's lists
-- over (app_private.hand_over_lists(), as the account-deletion purge does
-- before it deletes the user).
-- Why: an account deleted straight from auth.users (the Supabase dashboard,
-- supabase.auth.admin.deleteUser()) skipped the purge, and
-- keep_a_list_owner() lets an account deletion leave a list without an
-- owner: the lists that user was the only owner of stayed with their other
-- members and no owner, so nobody could manage or delete them again. Now
-- every way of deleting a user hands over; for the purge, which handed over
-- already, the trigger finds nothing left to do.
-- pgTAP 501 (a user deleted directly).
-- Rollback: supabase/rollbacks/20261126001100_hand_over_lists_on_user_delete.down.sql

create function app_private.hand_over_lists_of_deleted_user()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  perform app_private.hand_over_lists(old.id);
  return old;
end;
$$;
comment on function app_private.hand_over_lists_of_deleted_user() is
  'Trigger (before delete on auth.users, per row): the lists the user is the only owner of pass to another member (app_private.hand_over_lists), however the user is deleted. Not callable by any API role.';
revoke all on function app_private.hand_over_lists_of_deleted_user() from public, anon, authenticated, service_role;

create trigger on_auth_user_deleted_hand_over_lists
  before delete on auth.users
  for each row execute function app_private.hand_over_lists_of_deleted_user();

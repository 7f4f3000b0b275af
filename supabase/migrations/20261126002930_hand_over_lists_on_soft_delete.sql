-- What: an AFTER UPDATE OF deleted_at trigger on auth.users hands over the
-- lists of a user Supabase Auth soft-deletes (app_private.hand_over_lists, as
-- the purge and a hard delete of the user do), when deleted_at goes from null
-- to a time.
-- Why: supabase.auth.admin.deleteUser(id, true) (shouldSoftDelete) keeps the
-- auth.users row: Supabase Auth sets deleted_at, obfuscates the email and
-- phone, clears the password and metadata, soft-deletes the identities and
-- deletes the factors and sessions. The user can never sign in again, but no
-- row is deleted, so the hand-over on delete (20261126001100) never fired: a
-- list the user was the only owner of stayed with its other members and an
-- owner nobody can be, so nobody could manage, share or delete it again.
-- Now the longest-standing editor (else viewer) becomes its owner, as on a
-- deletion; the soft-deleted user stays a member (their row still exists)
-- until the new owner removes them or the user is deleted for good.
-- pgTAP 501 (a soft-deleted sole owner).
-- Rollback: supabase/rollbacks/20261126002930_hand_over_lists_on_soft_delete.down.sql

create function app_private.hand_over_lists_of_soft_deleted_user()
returns trigger
language plpgsql
security definer
set search_path = ''
set enable_seqscan = off
as $$
begin
  perform app_private.hand_over_lists(new.id);
  return null;
end;
$$;
comment on function app_private.hand_over_lists_of_soft_deleted_user() is
  'Trigger (after update of deleted_at on auth.users, per row, when it is first set): the lists a user soft-deleted by Supabase Auth (auth.admin.deleteUser(id, true)) is the only owner of pass to another member (app_private.hand_over_lists), as when a user is deleted. Index scans only, like hand_over_lists_of_deleted_user (a bulk soft delete). Not callable by any API role.';
revoke all on function app_private.hand_over_lists_of_soft_deleted_user() from public, anon, authenticated, service_role;

create trigger on_auth_user_soft_deleted_hand_over_lists
  after update of deleted_at on auth.users
  for each row
  when (old.deleted_at is null and new.deleted_at is not null)
  execute function app_private.hand_over_lists_of_soft_deleted_user();

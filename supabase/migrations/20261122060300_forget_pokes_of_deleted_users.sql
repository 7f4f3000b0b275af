-- What: a deleted account leaves no realtime poke naming it. Its user topic
-- (tidesync:user:<id>) and the topic of its personal list (whose id is the
-- user's) are deleted from realtime.messages with the auth.users row.
-- Why: the account purge (20261122050000, docs/account-deletion.md) promises
-- that no column anywhere holds a deleted user's id; the pokes of
-- 20261122060100 put it in realtime.messages.topic, which Realtime would only
-- drop days later with its daily partition. The trigger runs per statement
-- after the delete of auth.users, so after the cascades whose access changes
-- poked the user's topic.
-- Rollback: supabase/rollbacks/20261122060300_forget_pokes_of_deleted_users.down.sql

create function app_private.forget_pokes_of_deleted_users()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  delete from realtime.messages m
   using old_rows o
   where m.topic in ('tidesync:user:' || o.id::text, 'tidesync:scope:' || o.id::text);
  return null;
end;
$$;
comment on function app_private.forget_pokes_of_deleted_users() is
  'Trigger (after delete on auth.users, per statement): deletes the Realtime pokes whose topic names a deleted user (their user topic, their personal list''s topic). SECURITY DEFINER: realtime.messages belongs to Realtime''s admin role.';
revoke all on function app_private.forget_pokes_of_deleted_users() from public, anon, authenticated, service_role;

create trigger on_auth_users_deleted_forget_pokes after delete on auth.users
  referencing old table as old_rows for each statement execute function app_private.forget_pokes_of_deleted_users();

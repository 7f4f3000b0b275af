-- Down step of 20261128009300_hand_over_keeps_its_pokes.sql:
-- forget_pokes_of_deleted_users() as 20261126000500_sync_triggers_linear_in_bulk.sql
-- made it (every poke naming a deleted user's id removed, a handed-over list's
-- too), with its comment as 20261122060100_realtime_sync_pokes.sql wrote it.

create or replace function app_private.forget_pokes_of_deleted_users()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  -- The deleted users' topics as one set first: a join of the messages with
  -- the deleted rows compared every message with every deleted user
  -- (deleting 3,000 users in one statement: 3.7 s in this trigger alone).
  delete from realtime.messages m
   where m.topic in (select 'tidesync:user:' || o.id::text from old_rows o
                     union all
                     select 'tidesync:scope:' || o.id::text from old_rows o);
  return null;
end;
$$;
comment on function app_private.forget_pokes_of_deleted_users() is
  'Trigger (after delete on auth.users, per statement): deletes the Realtime pokes whose topic names a deleted user (their user topic, their personal list''s topic). SECURITY DEFINER: realtime.messages belongs to Realtime''s admin role.';

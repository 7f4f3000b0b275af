-- Down step of 20261128009800_forget_pokes_in_one_pass.sql:
-- forget_pokes_of_deleted_users() as 20261128009610_hand_over_pokes_for_members_who_can_sign_in.sql
-- made it (a correlated subquery per deleted user), with its comment.

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
  -- A personal list some other member keeps (handed over) keeps its pokes,
  -- if that member can sign in (and so join the topic): not one kept only by
  -- soft-deleted or banned members.
  delete from realtime.messages m
   where m.topic in (select 'tidesync:user:' || o.id::text from old_rows o
                     union all
                     select 'tidesync:scope:' || o.id::text from old_rows o
                      where not exists (select 1 from public.list_members lm
                                         where lm.list_id = o.id
                                           and lm.user_id not in (select d.id from old_rows d)
                                           and not app_private.cannot_sign_in(lm.user_id)));
  return null;
end;
$$;
comment on function app_private.forget_pokes_of_deleted_users() is
  'Trigger (after delete on auth.users, per statement): deletes the Realtime pokes whose topic names a deleted user: their user topic, and their personal list''s topic unless another member who can sign in keeps that list (handed over: its members are poked of the hand-over; app_private.cannot_sign_in: not a soft-deleted or banned one). SECURITY DEFINER: realtime.messages belongs to Realtime''s admin role, and it reads every membership of the list.';

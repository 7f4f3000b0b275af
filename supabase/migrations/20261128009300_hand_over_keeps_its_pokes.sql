-- What: app_private.forget_pokes_of_deleted_users() keeps the pokes of a deleted
-- user's personal list that is handed over and kept (members other than the
-- deleted users remain in it); it still removes their user topics' pokes and
-- those of a personal list that goes with them.
-- Why: the transaction that deletes a user hands their shared personal list over
-- (its heir becomes owner, the user's tasks lose their creator) and pokes the
-- list's topic for it; this trigger then removed that poke with the user's own,
-- as the topic names the user's id, which the list keeps. So the list's members
-- learned of the hand-over only at their next poll. Since migration
-- 20261128009000 later writes in such a list poke it; now the hand-over does too.
-- The topic names the list, which its members see anyway; a list left with no
-- member (deleted with its user, or whose other members go in the same
-- statement) keeps no poke: nobody may join its topic.
-- Tests: pgTAP 154-handed-over-personal-list-keeps-its-pokes, 171.
-- Down step: supabase/rollbacks/20261128009300_hand_over_keeps_its_pokes.down.sql

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
  -- A personal list some other member keeps (handed over) keeps its pokes.
  delete from realtime.messages m
   where m.topic in (select 'tidesync:user:' || o.id::text from old_rows o
                     union all
                     select 'tidesync:scope:' || o.id::text from old_rows o
                      where not exists (select 1 from public.list_members lm
                                         where lm.list_id = o.id
                                           and lm.user_id not in (select d.id from old_rows d)));
  return null;
end;
$$;
comment on function app_private.forget_pokes_of_deleted_users() is
  'Trigger (after delete on auth.users, per statement): deletes the Realtime pokes whose topic names a deleted user: their user topic, and their personal list''s topic unless another member keeps that list (handed over: its members are poked of the hand-over). SECURITY DEFINER: realtime.messages belongs to Realtime''s admin role, and it reads every membership of the list.';

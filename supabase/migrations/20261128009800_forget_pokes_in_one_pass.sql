-- What: forget_pokes_of_deleted_users() finds the handed-over personal lists
-- whose pokes it keeps with one index scan for all the deleted users (the
-- list ids = any of an array), as the same rule as 20261128009610.
-- Why: 20261128009300 and 009610 asked, per deleted user, whether another
-- member keeps their personal list: a correlated subquery run once per deleted
-- row (50 deleted users, 50 loops; tests/integration/sync-trigger-scale.test.ts
-- "forget the pokes of many deleted users in one pass" pins one pass).
-- Tests: tests/integration/sync-trigger-scale.test.ts; pgTAP 154, 171.
-- Rollback: supabase/rollbacks/20261128009800_forget_pokes_in_one_pass.down.sql

create or replace function app_private.forget_pokes_of_deleted_users()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_ids uuid[] := array(select o.id from old_rows o);
begin
  -- The deleted users' topics as one set first: a join of the messages with
  -- the deleted rows compared every message with every deleted user
  -- (deleting 3,000 users in one statement: 3.7 s in this trigger alone).
  -- A personal list some other member keeps (handed over) keeps its pokes,
  -- if that member can sign in (and so join the topic): not one kept only by
  -- soft-deleted or banned members. Those lists are found by one index scan
  -- for all the deleted ids (= any of an array), not a lookup per deleted user.
  delete from realtime.messages m
   where m.topic in (select 'tidesync:user:' || o.id::text from old_rows o
                     union all
                     select 'tidesync:scope:' || o.id::text from old_rows o)
     and m.topic not in (select 'tidesync:scope:' || lm.list_id::text
                           from public.list_members lm
                          where lm.list_id = any (v_ids)
                            and lm.user_id <> all (v_ids)
                            and not app_private.cannot_sign_in(lm.user_id));
  return null;
end;
$$;
comment on function app_private.forget_pokes_of_deleted_users() is
  'Trigger (after delete on auth.users, per statement): deletes the Realtime pokes whose topic names a deleted user: their user topic, and their personal list''s topic unless another member who can sign in keeps that list (handed over: its members are poked of the hand-over; app_private.cannot_sign_in: not a soft-deleted or banned one). SECURITY DEFINER: realtime.messages belongs to Realtime''s admin role, and it reads every membership of the list.';

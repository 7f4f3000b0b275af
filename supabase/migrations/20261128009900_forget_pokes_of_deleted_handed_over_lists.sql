-- What: when a personal list handed over at its owner's deletion (its id is
-- the deleted user's, kept in app_private.retired_user_ids) is deleted later,
-- by its new owner or with their account, the pokes on its topic
-- (tidesync:scope:<that id>) go with it.
-- Why: they named the deleted user's id and nobody could read them any more
-- (may_receive_poke refuses every caller once the list is gone), yet they
-- stayed in realtime.messages until Realtime's own clean-up: an account
-- deletion leaves that id only where docs/account-deletion.md says it does.
-- Other lists' topics carry no user's id; their pokes are left to Realtime's
-- clean-up, so an ordinary list's delete pays nothing for this but one
-- lookup by key per deleted list.
-- Tests: pgTAP 162.
-- Rollback: supabase/rollbacks/20261128009900_forget_pokes_of_deleted_handed_over_lists.down.sql

create function app_private.forget_pokes_of_deleted_retired_lists()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_topics text[] := array(select 'tidesync:scope:' || o.id::text
                             from old_rows o
                            where exists (select from app_private.retired_user_ids r where r.user_id = o.id));
begin
  -- Most deletes name no retired id: then realtime.messages is not read at all.
  if cardinality(v_topics) > 0 then
    delete from realtime.messages m where m.topic = any (v_topics);
  end if;
  return null;
end;
$$;
comment on function app_private.forget_pokes_of_deleted_retired_lists() is
  'Trigger (after delete on public.lists, per statement): deletes the Realtime pokes on the topic of every deleted list whose id is a deleted user''s (app_private.retired_user_ids: a personal list handed over at its owner''s deletion), which name that user and which nobody may read once the list is gone. Runs after the delete''s own pokes (trigger name order). SECURITY DEFINER: realtime.messages belongs to Realtime''s admin role, and retired_user_ids is read by no API role.';
revoke execute on function app_private.forget_pokes_of_deleted_retired_lists() from public;

-- Named to fire after tidesync_track_deletes (after-triggers fire in name order): any poke
-- the delete itself sends goes too.
create trigger unjoinable_pokes_forgotten
  after delete on public.lists
  referencing old table as old_rows
  for each statement execute function app_private.forget_pokes_of_deleted_retired_lists();

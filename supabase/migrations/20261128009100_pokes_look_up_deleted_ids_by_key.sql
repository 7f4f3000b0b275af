-- What: app_private.send_sync_pokes() looks each scope a write touched up among
-- the deleted users' ids (app_private.retired_user_ids) by its key, in a
-- subquery per scope, instead of an anti join of the statement's scopes with
-- that table. Same pokes as 20261128009000 (none for a deleted user's id while
-- that list has no member; its members read only for such an id).
-- Why: a plpgsql statement keeps the transition table's size of its first call
-- on the connection in its query tree (re-planning does not refresh it: see
-- 20261128008700). On a connection whose first synced write had a few hundred
-- rows or more (an import, one update across many lists, a big push: PostgREST
-- and the function keep their connections), the anti join stayed planned as a
-- hash join over all of retired_user_ids, one row per deleted account kept for
-- good: every later one-row write of that connection read them all (10,000
-- rows read for a one-list rename). The planner never expects more than 200
-- distinct scopes in a transition table, so it chose that plan while the table
-- held fewer than ~35,000 ids (random_page_cost 4; fewer with a cheaper random
-- read), and kept it until the table's next vacuum or analyze.
-- A correlated scalar subquery is never turned into a join nor hashed: every
-- plan, whatever the first call's size, is one index probe per distinct scope
-- (~2 µs; a bulk write's ~50 µs per scope of realtime.send dwarfs them).
-- Measured, 10,000 deleted ids, a one-row update after a 5,000-list one on the
-- connection: ~0.8 ms before, ~0.3 ms now, whole statement; a 5,000-list
-- update ~0.36 s either way. Planning the join per call instead (EXECUTE, as
-- 20261128008700) cost ~75 µs per trigger call (~0.45 ms for that one-row
-- update: two calls, its insert … on conflict's too), and a plan from the real
-- size still hashes the whole table for a write of a few hundred rows in one
-- list.
-- Tests: tests/integration/pokes-after-bulk-write.test.ts; pgTAP 154 and 171
-- (which pokes).
-- Rollback: supabase/rollbacks/20261128009100_pokes_look_up_deleted_ids_by_key.down.sql

create or replace function app_private.send_sync_pokes()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_topics text[];
  v_topic text;
  v_sent text := coalesce(current_setting('tidesync.pokes_sent', true), '');
  v_remembered text := v_sent;
  -- realtime.send does SET LOCAL realtime.topic and leaves it set: put back
  -- what the writer's transaction had, for its own Broadcast after the write.
  v_caller_topic text := current_setting('realtime.topic', true);
begin
  -- (Two queries: each table's transition table has its own columns.)
  if tg_table_name = 'sync_changes' then
    -- Never a deleted user's personal list (its id is the user's, kept in
    -- retired_user_ids) once it has no member: deleted with the user, its
    -- pokes come after forget_pokes_of_deleted_users ran and would name the
    -- user to nobody. One handed over and kept has members: poked as any list.
    -- Each scope is looked up by key (a subquery per scope, never a join: a
    -- join's plan keeps the size of the connection's first transition table,
    -- and after a bulk write a hash join read every deleted id for each later
    -- one-row write); its members are read only for a deleted user's id.
    select array_agg('tidesync:scope:' || s.scope_id::text) into v_topics
      from (select distinct n.scope_id from new_rows n) s
     where (select r.user_id from app_private.retired_user_ids r where r.user_id = s.scope_id) is null
        or app_private.list_has_members(s.scope_id);
  else
    select array_agg(distinct 'tidesync:user:' || n.user_id::text) into v_topics from new_rows n;
  end if;
  foreach v_topic in array coalesce(v_topics, '{}')
  loop
    -- Once per topic and transaction, however many statements touch it, for
    -- the first ~300 topics of a transaction (16 KiB of names); past them,
    -- once per statement. Remembering every topic made a transaction of many
    -- statements quadratic (a bulk import of 8,000 users: 54 s), since each
    -- statement searched and copied the whole list.
    continue when position(' ' || v_topic || ' ' in v_sent) > 0;
    perform realtime.send('{}'::jsonb, 'poke', v_topic, true);
    if length(v_sent) < 16384 then
      v_sent := v_sent || ' ' || v_topic || ' ';
    end if;
  end loop;
  if current_setting('realtime.topic', true) is distinct from v_caller_topic then
    perform set_config('realtime.topic', coalesce(v_caller_topic, ''), true);
  end if;
  if v_sent <> v_remembered then
    perform set_config('tidesync.pokes_sent', v_sent, true);
  end if;
  return null;
end;
$$;
comment on function app_private.send_sync_pokes() is
  'Trigger (after insert/update on sync_changes and sync_access, per statement): posts a data-free poke to the private Realtime topic of every scope (or user) the statement touched, once per topic and transaction for the first ~300 topics of a transaction (16 KiB of names remembered), once per topic and statement past them; none for a scope whose id is a deleted user''s (app_private.retired_user_ids) while it has no member (app_private.list_has_members: the personal list deleted with its user; nobody may join its topic), so a personal list handed over and kept is poked as any list. realtime.send never fails the write (it turns errors into warnings); it leaves realtime.topic set to the poke''s topic, so the trigger puts back the writer''s own realtime.topic (an app''s Broadcast later in the transaction is unaffected). SECURITY DEFINER: realtime.messages takes no insert from the API roles.';

-- What: a sync poke leaves realtime.topic as it found it, so an app's own
-- Broadcast later in the same transaction works as it would without tidesync.
-- Why: realtime.send() (Supabase Realtime's, faithfully in the stand-in) does
-- SET LOCAL realtime.topic TO <topic> and never undoes it. After a write to a
-- synced table, realtime.topic() named tidesync:scope:/tidesync:user: for the
-- rest of the transaction: the app's own insert into realtime.messages was
-- refused by "Only the database sends on tidesync's topics", its rows were
-- hidden by "Only members receive tidesync's pokes, each on its own topic",
-- and an app policy comparing realtime.topic() saw tidesync's topic. The poke
-- trigger now puts back the value it found (unset reads as null through
-- realtime.topic()'s nullif). A SET clause on the function would do this, but
-- only a superuser may attach one for a custom setting.
-- Test: supabase/tests/database/602-realtime-pokes-leave-app-topic.test.sql
-- Rollback: supabase/rollbacks/20261127000100_pokes_leave_realtime_topic_as_found.down.sql

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
    select array_agg(distinct 'tidesync:scope:' || n.scope_id::text) into v_topics from new_rows n;
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
  'Trigger (after insert/update on sync_changes and sync_access, per statement): posts a data-free poke to the private Realtime topic of every scope (or user) the statement touched, once per topic and transaction for the first ~300 topics of a transaction (16 KiB of names remembered), once per topic and statement past them. realtime.send never fails the write (it turns errors into warnings); it leaves realtime.topic set to the poke''s topic, so the trigger puts back the writer''s own realtime.topic (an app''s Broadcast later in the transaction is unaffected). SECURITY DEFINER: realtime.messages takes no insert from the API roles.';

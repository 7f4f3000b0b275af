-- Down step of 20261128009100_pokes_look_up_deleted_ids_by_key.sql:
-- send_sync_pokes() as 20261128009000_handed_over_personal_list_keeps_its_pokes.sql
-- made it (the statement's scopes anti-joined with retired_user_ids), with its comment.

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
    -- The members are a filter of the anti join (of s, not r: on r it would
    -- run for every deleted id a hash join reads), so read only for a match.
    select array_agg('tidesync:scope:' || s.scope_id::text) into v_topics
      from (select distinct n.scope_id from new_rows n) s
     where not exists (select 1 from app_private.retired_user_ids r
                        where r.user_id = s.scope_id
                          and not app_private.list_has_members(s.scope_id));
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

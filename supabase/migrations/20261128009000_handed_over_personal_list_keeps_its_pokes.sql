-- What: app_private.send_sync_pokes() leaves out a scope whose id is a deleted
-- user's (app_private.retired_user_ids) only while that list has no member
-- (app_private.list_has_members): the personal list deleted with its user. A
-- shared personal list handed over at its user's deletion is poked again, as
-- any list, by every write after the deletion.
-- Why: migration 20261128007400 left out every scope whose id is in
-- retired_user_ids, for the personal list that the user's delete cascades to
-- after forget_pokes_of_deleted_users ran. It matched the personal list that
-- was shared, handed over and kept too (docs/account-deletion.md: it keeps
-- the user's id): no write in it poked its topic again, for good, and its
-- members, who still join the topic, learnt of a change only from their slow
-- polling. A list with no member has nobody who may join its topic (the
-- user's own membership goes first in the cascade, a list's members with its
-- delete), so its pokes would only leave the user's id in realtime.messages;
-- a handed-over list deleted later is told to its members on their own
-- topics (their loss of access).
-- Cost: the plan is 007400's (an anti join of the statement's scopes with
-- retired_user_ids by its key); the members are read only as the join's
-- filter, for a scope found among the deleted users' ids (measured with
-- auto_explain, 5,000 scopes in a statement, 200,000 deleted ids).
-- Tests: supabase/tests/database/154-handed-over-personal-list-keeps-its-pokes.test.sql,
-- 171-operator-delete-leaves-no-poke-naming-the-user.test.sql.
-- Rollback: supabase/rollbacks/20261128009000_handed_over_personal_list_keeps_its_pokes.down.sql

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

comment on function app_private.list_has_members(uuid) is
  'Whether the list has any member: false for a list being created, before its AFTER INSERT trigger adds the creator as owner (a list always keeps an owner), and for one whose members went with its delete or its last member''s account. For the lists select policy and app_private.send_sync_pokes (a deleted user''s personal list with no member is not poked). SECURITY DEFINER (it must see every membership); answers true or false only.';

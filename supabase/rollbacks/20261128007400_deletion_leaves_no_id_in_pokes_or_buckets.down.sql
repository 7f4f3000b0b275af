-- Down step of 20261128007400_deletion_leaves_no_id_in_pokes_or_buckets.sql:
-- send_sync_pokes() as 20261127000100_pokes_leave_realtime_topic_as_found.sql
-- made it (a deleted user's personal list is poked again), the purge's
-- Storage check as 20261126001810_purge_checks_storage_owner_id.sql made it
-- (objects only), with the comment 20261128004000 gave it.

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

create or replace function app_private.refuse_purge_while_storage_objects_remain(p_user_id uuid)
returns void
language plpgsql
stable
security invoker
set search_path = ''
as $$
begin
  -- Runs inside the purge (security definer, as the owner): readable by the
  -- owner on Supabase; where it is not (or there is no storage schema), there
  -- is nothing this can check, as before.
  if to_regclass('storage.objects') is not null and has_table_privilege('storage.objects', 'select') then
    if exists (select 1 from storage.objects o where o.owner = p_user_id or o.owner_id = p_user_id::text) then
      raise exception 'the user still owns Storage objects: remove them (through the Storage API) before the purge'
        using errcode = 'object_in_use';
    end if;
  end if;
end
$$;
comment on function app_private.refuse_purge_while_storage_objects_remain(uuid) is 'The purge''s Storage check, called by the account purge (purge_account) after the before_account_purge hook: raises object_in_use (the account is rolled back alone and retried on a later run) while storage.objects has an object whose owner or owner_id names the user. Not callable by any API role.';

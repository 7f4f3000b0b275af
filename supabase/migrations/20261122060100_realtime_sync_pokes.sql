-- What: realtime pokes. After a transaction that changes synced rows commits,
-- every member of the scopes it touched gets a data-free "poke" on a private
-- Supabase Realtime Broadcast topic per scope, `tidesync:scope:<scope id>`;
-- an access change (invited, removed, left) pokes the user's own topic,
-- `tidesync:user:<user id>`. A client that receives one pulls; a poke carries
-- nothing but Realtime's message id, so it reveals no data (docs/sync.md).
-- How: statement-level triggers on app_private.sync_changes and
-- app_private.sync_access (written for every write of a synced row and every
-- membership change, whatever made it) call realtime.send(…, private => true),
-- at most once per topic and transaction. Realtime delivers a message only
-- once it is committed, and only to a channel the user may join: the policy
-- below on realtime.messages, which Realtime evaluates as the joining user
-- with realtime.topic() set to the channel's topic. Nobody may send on these
-- topics but the database (no insert policy for them).
-- Rollback: supabase/rollbacks/20261122060100_realtime_sync_pokes.down.sql

create function app_private.may_receive_poke(p_topic text)
returns boolean
language sql
stable
security invoker
set search_path = ''
as $$
  select case
    when p_topic = 'tidesync:user:' || (select auth.uid())::text then true
    when p_topic ~ '^tidesync:scope:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
      then substr(p_topic, 16)::uuid = any (app_private.visible_scope_ids())
    else false
  end;
$$;
comment on function app_private.may_receive_poke(text) is
  'True when the caller may receive the pokes of a Realtime topic: their own tidesync:user:<id>, or tidesync:scope:<id> of a scope (list) the scope table''s policies let them read. Any other topic: false.';
revoke all on function app_private.may_receive_poke(text) from public, anon, authenticated, service_role;
grant execute on function app_private.may_receive_poke(text) to authenticated;

create policy "Members receive the sync pokes of their lists and their own"
  on realtime.messages
  for select
  to authenticated
  using (extension = 'broadcast' and (select app_private.may_receive_poke((select realtime.topic()))));
comment on policy "Members receive the sync pokes of their lists and their own" on realtime.messages is
  'Realtime checks this as the joining user with realtime.topic() = the channel topic: members of a list may join tidesync:scope:<list id>, each user tidesync:user:<own id>. Pokes carry no data; other topics are left to other policies.';

create function app_private.send_sync_pokes()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_topics text[];
  v_topic text;
  v_sent text := coalesce(current_setting('tidesync.pokes_sent', true), '');
begin
  -- (Two queries: each table's transition table has its own columns.)
  if tg_table_name = 'sync_changes' then
    select array_agg(distinct 'tidesync:scope:' || n.scope_id::text) into v_topics from new_rows n;
  else
    select array_agg(distinct 'tidesync:user:' || n.user_id::text) into v_topics from new_rows n;
  end if;
  foreach v_topic in array coalesce(v_topics, '{}')
  loop
    -- Once per topic and transaction, however many statements touch it.
    continue when position(' ' || v_topic || ' ' in v_sent) > 0;
    perform realtime.send('{}'::jsonb, 'poke', v_topic, true);
    v_sent := v_sent || ' ' || v_topic || ' ';
  end loop;
  perform set_config('tidesync.pokes_sent', v_sent, true);
  return null;
end;
$$;
comment on function app_private.send_sync_pokes() is
  'Trigger (after insert/update on sync_changes and sync_access, per statement): posts a data-free poke to the private Realtime topic of every scope (or user) the statement touched, once per topic and transaction. realtime.send never fails the write (it turns errors into warnings). SECURITY DEFINER: realtime.messages takes no insert from the API roles.';
revoke all on function app_private.send_sync_pokes() from public, anon, authenticated, service_role;

create trigger tidesync_poke_changes_inserted after insert on app_private.sync_changes
  referencing new table as new_rows for each statement execute function app_private.send_sync_pokes();
create trigger tidesync_poke_changes_updated after update on app_private.sync_changes
  referencing new table as new_rows for each statement execute function app_private.send_sync_pokes();
create trigger tidesync_poke_access_inserted after insert on app_private.sync_access
  referencing new table as new_rows for each statement execute function app_private.send_sync_pokes();
create trigger tidesync_poke_access_updated after update on app_private.sync_access
  referencing new table as new_rows for each statement execute function app_private.send_sync_pokes();

-- Down step of 20261126001500_access_loss_after_writes_in_flight.sql:
-- track_sync_access() as 20261122010000_sync_engine.sql made it (a loss is
-- numbered without waiting for writes into the scope).
create or replace function app_private.track_sync_access()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_scope text;
  v_user text;
  v_granted boolean := tg_op = 'INSERT';
begin
  select m.scope_column, m.user_column into v_scope, v_user
    from app_private.sync_memberships m where m.relation = tg_relid;
  if v_scope is null then
    return null;
  end if;
  -- Transition tables exist only for their own event, hence two statements.
  if v_granted then
    insert into app_private.sync_access as a (user_id, scope_id, granted, seq, txid, changed_at)
    select (to_jsonb(n) ->> v_user)::uuid, (to_jsonb(n) ->> v_scope)::uuid, true,
           nextval('app_private.sync_seq'), pg_current_xact_id(), now()
      from new_rows n
    on conflict (user_id, scope_id) do update
      set granted = true, seq = excluded.seq, txid = excluded.txid, changed_at = excluded.changed_at;
  else
    insert into app_private.sync_access as a (user_id, scope_id, granted, seq, txid, changed_at)
    select c.user_id, c.scope_id, false, nextval('app_private.sync_seq'), pg_current_xact_id(), now()
      from (select (to_jsonb(o) ->> v_user)::uuid as user_id, (to_jsonb(o) ->> v_scope)::uuid as scope_id from old_rows o) c
     -- a user being deleted (the cascade from auth.users) needs no access history
     where exists (select 1 from auth.users u where u.id = c.user_id)
    on conflict (user_id, scope_id) do update
      set granted = false, seq = excluded.seq, txid = excluded.txid, changed_at = excluded.changed_at;
  end if;
  return null;
end;
$$;
comment on function app_private.track_sync_access() is
  'Trigger (after insert/delete, per statement) of a membership table: logs that a user gained (insert) or lost (delete) access to a scope, so their next pull delivers or removes the scope''s rows. SECURITY DEFINER: an owner removing a member writes the member''s access entry.';

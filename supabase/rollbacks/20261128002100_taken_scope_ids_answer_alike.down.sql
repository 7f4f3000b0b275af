-- Down step of 20261128002100_taken_scope_ids_answer_alike.sql: the trigger as
-- migration 20261128000710 made it (an upsert of a live list the caller cannot
-- read is refused by the update's policy, 42501, again).
create or replace function app_private.refuse_hidden_scope_history()
returns trigger
language plpgsql
security definer
set search_path = ''
as $function$
declare
  v_collection text;
  v_deleted_by xid8;
  v_access app_private.sync_access;
  v_pkey name;
begin
  -- Users only: the service role and the owner (a restore, a support fix) create any id.
  if current_setting('role') <> 'authenticated' then
    return new;
  end if;
  select t.collection into v_collection from app_private.sync_tables t where t.relation = tg_relid;
  -- No history (a new id, or one the purge has forgotten), or a live row (its primary key answers).
  if not exists (select 1 from app_private.sync_changes c where c.scope_id = new.id)
     or exists (select 1 from app_private.sync_changes c
                 where c.scope_id = new.id and c.collection = v_collection and c.id = new.id and c.present) then
    return new;
  end if;
  -- The transaction that deleted the scope row (its own entry, no longer present).
  select c.txid into v_deleted_by
    from app_private.sync_changes c
   where c.scope_id = new.id and c.collection = v_collection and c.id = new.id;
  select * into v_access from app_private.sync_access a where a.user_id = auth.uid() and a.scope_id = new.id;
  -- A member when it was deleted: still one (a membership table without a cascade), or their
  -- access was lost by that deletion, after every row of the scope entered it. They could read
  -- the whole history then; anyone else would read entries of rows that were never theirs.
  if coalesce(v_access.granted, false)
     or coalesce(v_access.txid = v_deleted_by
                 and not exists (select 1 from app_private.sync_changes c where c.scope_id = new.id and c.since_seq > v_access.seq), false) then
    return new;
  end if;
  -- Answered as a taken id: the answer does not tell a deleted scope's id from any other taken id.
  select k.conname into v_pkey from pg_catalog.pg_constraint k where k.conrelid = tg_relid and k.contype = 'p';
  raise exception 'duplicate key value violates unique constraint "%"', v_pkey
    using errcode = 'unique_violation', constraint = v_pkey, schema = tg_table_schema, table = tg_table_name,
          detail = format('Key (id)=(%s) already exists.', new.id);
end;
$function$;
comment on function app_private.refuse_hidden_scope_history() is 'Trigger (before insert on every scope table, per row; installed by enable_sync): as authenticated, a scope row (a list) created with the id of one that was deleted, while its change entries are kept (retention_days), is refused as that id being taken (23505 on the table''s primary key) unless the caller was a member when it was deleted (their access entry is a grant, or the loss written by the deleting transaction after every row of the scope entered it). Otherwise the new scope''s pulls (a grant lists every entry of the scope) and the sync_records policy would show its creator the ids, versions and times of rows that were in it after them or never theirs. SECURITY DEFINER: it reads the bookkeeping of every user.';
comment on function app_private.refuse_hidden_scope_history() is 'Trigger (before insert on every scope table, per row; installed by enable_sync): as authenticated, a scope row (a list) created with the id of one that was deleted, while its change entries are kept (retention_days), is refused as that id being taken (23505 on the table''s primary key) unless the caller was a member when it was deleted (their access entry is a grant, or the loss written by the deleting transaction after every row of the scope entered it). Otherwise the new scope''s pulls (a grant lists every entry of the scope) and the sync_records policy would show its creator the ids, versions and times of rows that were in it after them or never theirs. SECURITY DEFINER: it reads the bookkeeping of every user.';

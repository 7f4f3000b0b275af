-- What: an insert as authenticated into a scope table (public.lists) with the
-- id of a live row the caller is no member of is refused as that id being taken
-- (23505 on the primary key), by the trigger that already answers a deleted
-- scope's id so (app_private.refuse_hidden_scope_history, every scope table).
-- Why: supabase-js upsert() (insert … on conflict (id) do update) of such an id
-- went on to the update, which a policy refused (42501), while a deleted
-- list's id and a user's id (their personal list's) answered 23505: whoever
-- knew a uuid (a member removed before the list was deleted) learnt whether
-- the list was live, deleted, or a user's. A plain insert answered 23505 for
-- all three, and so does an upsert now. An upsert by a member (their access
-- entry in app_private.sync_access is a grant, as the membership table keeps
-- it) goes on to its update as before. A new id costs nothing more (it has no
-- change entries: the trigger returns before).
-- Tests: pgTAP 136-taken-scope-ids-answer-alike.
-- Down step: supabase/rollbacks/20261128002100_taken_scope_ids_answer_alike.down.sql

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
  -- No history: a new id, or one the purge has forgotten.
  if not exists (select 1 from app_private.sync_changes c where c.scope_id = new.id) then
    return new;
  end if;
  select k.conname into v_pkey from pg_catalog.pg_constraint k where k.conrelid = tg_relid and k.contype = 'p';
  select * into v_access from app_private.sync_access a where a.user_id = auth.uid() and a.scope_id = new.id;
  -- A live row. A member's: its primary key answers a plain insert, and an upsert (supabase-js
  -- upsert(): on conflict do update) goes on to its update, as the policies decide. Anyone else's
  -- is answered here as a taken id, as a plain insert is: on the upsert's update path a policy
  -- would refuse it (42501), telling a live scope from a deleted one or a user's id (each 23505).
  if exists (select 1 from app_private.sync_changes c
              where c.scope_id = new.id and c.collection = v_collection and c.id = new.id and c.present) then
    if coalesce(v_access.granted, false) then
      return new;
    end if;
    raise exception 'duplicate key value violates unique constraint "%"', v_pkey
      using errcode = 'unique_violation', constraint = v_pkey, schema = tg_table_schema, table = tg_table_name,
            detail = format('Key (id)=(%s) already exists.', new.id);
  end if;
  -- The transaction that deleted the scope row (its own entry, no longer present).
  select c.txid into v_deleted_by
    from app_private.sync_changes c
   where c.scope_id = new.id and c.collection = v_collection and c.id = new.id;
  -- A member when it was deleted: still one (a membership table without a cascade), or their
  -- access was lost by that deletion, after every row of the scope entered it. They could read
  -- the whole history then; anyone else would read entries of rows that were never theirs.
  if coalesce(v_access.granted, false)
     or coalesce(v_access.txid = v_deleted_by
                 and not exists (select 1 from app_private.sync_changes c where c.scope_id = new.id and c.since_seq > v_access.seq), false) then
    return new;
  end if;
  -- Answered as a taken id: the answer does not tell a deleted scope's id from any other taken id.
  raise exception 'duplicate key value violates unique constraint "%"', v_pkey
    using errcode = 'unique_violation', constraint = v_pkey, schema = tg_table_schema, table = tg_table_name,
          detail = format('Key (id)=(%s) already exists.', new.id);
end;
$function$;
comment on function app_private.refuse_hidden_scope_history() is 'Trigger (before insert on every scope table, per row; installed by enable_sync): as authenticated, a scope row (a list) created with the id of one that was deleted, while its change entries are kept (retention_days), is refused as that id being taken (23505 on the table''s primary key) unless the caller was a member when it was deleted (their access entry is a grant, or the loss written by the deleting transaction after every row of the scope entered it). Otherwise the new scope''s pulls (a grant lists every entry of the scope) and the sync_records policy would show its creator the ids, versions and times of rows that were in it after them or never theirs. SECURITY DEFINER: it reads the bookkeeping of every user.';
comment on function app_private.refuse_hidden_scope_history() is 'Trigger (before insert on every scope table, per row; installed by enable_sync): as authenticated, a scope row (a list) created with the id of one that was deleted, while its change entries are kept (retention_days), is refused as that id being taken (23505 on the table''s primary key) unless the caller was a member when it was deleted (their access entry is a grant, or the loss written by the deleting transaction after every row of the scope entered it). Otherwise the new scope''s pulls (a grant lists every entry of the scope) and the sync_records policy would show its creator the ids, versions and times of rows that were in it after them or never theirs. The id of a live scope row the caller is no member of (no granted access entry) is refused the same way, so that an upsert (on conflict do update) is not refused by a policy instead (42501), which would tell a live scope from a deleted one. SECURITY DEFINER: it reads the bookkeeping of every user.';

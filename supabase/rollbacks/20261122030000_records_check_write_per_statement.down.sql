-- Down step of 20261122030000_records_check_write_per_statement.sql: drop the
-- per-statement head check and restore records_check_write as
-- 20261122010000_sync_records_and_ops.sql created it (per-row head lookup).
drop trigger if exists records_check_head_after_insert on app_private.records;
drop trigger if exists records_check_head_after_update on app_private.records;
drop function if exists app_private.records_check_head();

create or replace function app_private.records_check_write()
returns trigger
language plpgsql
security invoker
set search_path = ''
as $$
declare
  head_seq bigint;
begin
  if tg_op = 'UPDATE' then
    if new.user_id <> old.user_id or new.collection <> old.collection or new.id <> old.id then
      raise exception 'a record keeps its owner, collection and id' using errcode = 'check_violation';
    end if;
    if new.version <= old.version then
      raise exception 'record version must increase (% -> %)', old.version, new.version using errcode = 'check_violation';
    end if;
    if new.created_at <> old.created_at then
      raise exception 'records.created_at cannot change' using errcode = 'check_violation';
    end if;
  end if;
  -- The writer must have allocated this seq from its (locked) head first:
  -- this is what makes change_seq order equal commit order per user.
  select h.last_seq into head_seq from app_private.sync_heads h where h.user_id = new.user_id;
  if head_seq is null or new.version > head_seq then
    raise exception 'record version % was not allocated from the user''s sync head', new.version using errcode = 'check_violation';
  end if;
  return new;
end;
$$;
comment on function app_private.records_check_write() is
  'Trigger: owner, collection and id never change, version strictly increases, created_at is fixed, and every version was first allocated from the user''s sync_heads row.';

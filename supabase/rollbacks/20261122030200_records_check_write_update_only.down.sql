-- Down step of 20261122030200_records_check_write_update_only.sql: drop the
-- foreign-owner check and restore records_check_write and its trigger as
-- 20261122030000_records_check_write_per_statement.sql left them.
drop trigger if exists records_check_foreign_owner on app_private.records;
drop function if exists app_private.records_check_foreign_owner();

create or replace function app_private.records_check_write()
returns trigger
language plpgsql
security invoker
set search_path = ''
as $$
declare
  caller uuid := auth.uid();
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
  -- Writes for the caller's own user (and writes without JWT claims) are
  -- head-checked once per statement by records_check_head. A row for some
  -- other user keeps the per-row lookup so it is refused here, before RLS.
  if caller is not null and new.user_id <> caller then
    select h.last_seq into head_seq from app_private.sync_heads h where h.user_id = new.user_id;
    if head_seq is null or new.version > head_seq then
      raise exception 'record version % was not allocated from the user''s sync head', new.version using errcode = 'check_violation';
    end if;
  end if;
  return new;
end;
$$;
comment on function app_private.records_check_write() is
  'Trigger (before, per row): owner, collection and id never change, version strictly increases, created_at is fixed; a row for another user than the JWT subject is head-checked here. The head check of every other row runs once per statement in records_check_head.';

drop trigger records_check_write on app_private.records;
create trigger records_check_write
  before insert or update on app_private.records
  for each row execute function app_private.records_check_write();

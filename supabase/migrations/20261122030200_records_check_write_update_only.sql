-- What: the per-row part of the records checks stops running PL/pgSQL for
-- inserts. records_check_write (before, per row) now fires on UPDATE only and
-- keeps just the update checks (owner, collection and id never change,
-- version strictly increases, created_at is fixed). The per-row head lookup
-- for a row inserted under ANOTHER user's JWT moves to its own BEFORE INSERT
-- trigger, records_check_foreign_owner, guarded by a WHEN clause that
-- Postgres evaluates without calling PL/pgSQL.
-- Why: after 20261122030000 the head check runs once per statement
-- (records_check_head), but records_check_write still ran PL/pgSQL for every
-- inserted row only to compare the row's user_id with auth.uid() (~2.6 ms per
-- 500-row push in `npm run bench`). Behaviour is unchanged: an update cannot
-- change user_id (records_check_write refuses it), so the foreign-owner check
-- is needed on insert only, and a row inserted for another user is still
-- refused with check_violation (23514) before the RLS WITH CHECK runs.
-- rollback:
--   drop trigger if exists records_check_foreign_owner on app_private.records;
--   drop function if exists app_private.records_check_foreign_owner();
--   then re-run `create or replace function app_private.records_check_write()`
--   of 20261122030000_records_check_write_per_statement.sql with its comment,
--   and recreate its trigger `before insert or update ... for each row`.

create or replace function app_private.records_check_write()
returns trigger
language plpgsql
security invoker
set search_path = ''
as $$
begin
  if new.user_id <> old.user_id or new.collection <> old.collection or new.id <> old.id then
    raise exception 'a record keeps its owner, collection and id' using errcode = 'check_violation';
  end if;
  if new.version <= old.version then
    raise exception 'record version must increase (% -> %)', old.version, new.version using errcode = 'check_violation';
  end if;
  if new.created_at <> old.created_at then
    raise exception 'records.created_at cannot change' using errcode = 'check_violation';
  end if;
  return new;
end;
$$;
comment on function app_private.records_check_write() is
  'Trigger (before update, per row): owner, collection and id never change, version strictly increases, created_at is fixed. The head check runs per statement in records_check_head (and per row in records_check_foreign_owner for rows of another user).';

-- Inserts need none of the update checks: the trigger now fires on update
-- only, so an insert of the caller's own rows runs no per-row PL/pgSQL.
drop trigger records_check_write on app_private.records;
create trigger records_check_write
  before update on app_private.records
  for each row execute function app_private.records_check_write();

create function app_private.records_check_foreign_owner()
returns trigger
language plpgsql
security invoker
set search_path = ''
as $$
declare
  head_seq bigint;
begin
  select h.last_seq into head_seq from app_private.sync_heads h where h.user_id = new.user_id;
  if head_seq is null or new.version > head_seq then
    raise exception 'record version % was not allocated from the user''s sync head', new.version using errcode = 'check_violation';
  end if;
  return new;
end;
$$;
comment on function app_private.records_check_foreign_owner() is
  'Trigger (before insert, per row, only for a row whose user_id is not the JWT subject): the row''s version must come from a sync head the caller can see, so a write for another user is refused with check_violation before RLS decides.';
revoke all on function app_private.records_check_foreign_owner() from public, anon, authenticated, service_role;

-- The WHEN clause is evaluated without calling PL/pgSQL; it is false for every
-- row the api function writes (always the caller's own) and for roles without
-- JWT claims (the statement-level check covers those). An update cannot
-- change user_id (records_check_write), so only inserts need this.
create trigger records_check_foreign_owner
  before insert on app_private.records
  for each row
  when (auth.uid() is not null and new.user_id <> auth.uid())
  execute function app_private.records_check_foreign_owner();

-- What: records_check_write no longer looks up the user's sync head once per
-- row. The per-row trigger keeps only the checks that need no query (owner,
-- collection, id and created_at never change; version strictly increases);
-- the head check (every version was first allocated from the user's
-- sync_heads row, i.e. version <= last_seq) moves to statement-level AFTER
-- triggers that compare the statement's transition table against
-- sync_heads in one join.
-- Why: the per-row `select ... from sync_heads` (plus its RLS InitPlan) cost
-- ~6.4 ms per 500-row push (docs/performance.md, "push_500"); one join per
-- statement does the same check for the whole batch. The commit-order
-- guarantee of 20261122010000 is unchanged: a version above the head's
-- last_seq still aborts the writing statement, so no transaction can commit a
-- seq it did not allocate from its locked head.
-- A row written under the JWT of ANOTHER user (or of no user the caller can
-- see) still gets the old per-row head lookup in the BEFORE trigger, so it is
-- refused with check_violation (23514) before the RLS WITH CHECK runs, exactly
-- as before; that path is never taken by the api function's own writes.
-- rollback:
--   drop trigger if exists records_check_head_after_insert on app_private.records;
--   drop trigger if exists records_check_head_after_update on app_private.records;
--   drop function if exists app_private.records_check_head();
--   then re-run the `create or replace function app_private.records_check_write()`
--   of 20261122010000_sync_records_and_ops.sql (per-row head lookup) and its comment.

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

create function app_private.records_check_head()
returns trigger
language plpgsql
security invoker
set search_path = ''
as $$
declare
  bad_version bigint;
begin
  -- The writer must have allocated every version from its (locked) head
  -- first: this is what makes change_seq order equal commit order per user.
  select w.version into bad_version
    from written_rows w
    left join app_private.sync_heads h on h.user_id = w.user_id
   where h.user_id is null or w.version > h.last_seq
   limit 1;
  if found then
    raise exception 'record version % was not allocated from the user''s sync head', bad_version using errcode = 'check_violation';
  end if;
  return null;
end;
$$;
comment on function app_private.records_check_head() is
  'Trigger (after, per statement, transition table written_rows): every version a statement wrote to app_private.records was first allocated from its user''s sync_heads row (version <= last_seq).';
revoke all on function app_private.records_check_head() from public, anon, authenticated, service_role;

-- Transition tables allow one event per trigger, hence two triggers; an
-- insert ... on conflict do update fires both, each with its own rows.
create trigger records_check_head_after_insert
  after insert on app_private.records
  referencing new table as written_rows
  for each statement execute function app_private.records_check_head();

create trigger records_check_head_after_update
  after update on app_private.records
  referencing new table as written_rows
  for each statement execute function app_private.records_check_head();

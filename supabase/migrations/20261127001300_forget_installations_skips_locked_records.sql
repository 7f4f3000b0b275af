-- What: app_private.forget_queued_installations() never waits on a sync
-- record a write holds. It locks the records naming a queued installation id
-- with FOR UPDATE SKIP LOCKED, in primary-key order, forgets the id in those,
-- and keeps queued every id still found in a record it skipped: the next pass
-- (the retention purge's, within 5 minutes) retries it.
-- Why: its one UPDATE locked every such record in scan order and held them to
-- the end of the pass (the end of run_account_deletions or of
-- purge_sync_retention); a push writing the same records in its own order
-- deadlocked with it: the push got 40P01 (a 503), or the purge run rolled
-- back whole.
-- Cost: the same one read of every record; the skipped ones are told apart
-- from the records read, not by a second read.
-- Test: tests/integration/forget-installations-skip-locked.test.ts.
--
-- Down step: supabase/rollbacks/20261127001300_forget_installations_skips_locked_records.down.sql.

create or replace function app_private.forget_queued_installations()
returns void
language plpgsql
volatile
security invoker
set search_path = ''
as $$
declare
  v_taken uuid[];
  v_ids jsonb;
  v_left jsonb := '{}';
begin
  -- Take the queue; ids a concurrent pass holds are its to forget. An id
  -- another user who can still sign in registered before it was queued (one
  -- phone, two accounts) stays theirs; a device registered later is a new
  -- account on the deleted one's phone, which must not inherit its writes.
  -- v_ids is an object: `?` finds a key by binary search, so a long queue
  -- costs each record a few comparisons, not one per id.
  select coalesce(array_agg(q.installation_id), '{}'),
         coalesce(jsonb_object_agg(q.installation_id::text, true) filter (
           where not exists (select 1 from app_private.devices d join auth.users u on u.id = d.user_id
                              where d.installation_id = q.installation_id and u.deleted_at is null
                                and d.created_at <= q.queued_at)), '{}')
    into v_taken, v_ids
    from (select t.installation_id, t.queued_at from app_private.installations_to_forget t for update skip locked) q;

  if v_ids <> '{}' then
    -- Records a write holds are skipped, never waited on (a push writes in
    -- its own order: waiting could deadlock with it); the ids they still
    -- name stay queued.
    with matching as materialized (
      select s.collection, s.id, s.field_versions
        from app_private.sync_records s
       where exists (select 1 from jsonb_each(s.field_versions) e where v_ids ? (e.value ->> 'd'))
    ), forgotten as (
      update app_private.sync_records s
         set field_versions = (
           select jsonb_object_agg(e.key, case when v_ids ? (e.value ->> 'd') then jsonb_set(e.value, '{d}', 'null') else e.value end)
             from jsonb_each(s.field_versions) e)
        from (select l.collection, l.id
                from app_private.sync_records l
                join matching m on m.collection = l.collection and m.id = l.id
               -- Checked again on the version locked (a write may have committed since).
               where exists (select 1 from jsonb_each(l.field_versions) e where v_ids ? (e.value ->> 'd'))
               order by l.collection, l.id
                 for update of l skip locked) locked
       where s.collection = locked.collection and s.id = locked.id
      returning s.collection, s.id
    )
    select coalesce(jsonb_object_agg(e.value ->> 'd', true), '{}') into v_left
      from matching m
     cross join jsonb_each(m.field_versions) e
     where v_ids ? (e.value ->> 'd')
       and not exists (select 1 from forgotten f where f.collection = m.collection and f.id = m.id);
  end if;

  delete from app_private.installations_to_forget q
   where q.installation_id = any (v_taken) and not v_left ? q.installation_id::text;
end
$$;
comment on function app_private.forget_queued_installations() is
  'Takes app_private.installations_to_forget: sets d (the writing device) to null in every sync_records.field_versions entry stamped by a queued installation id that no other user who can still sign in registered before it was queued (the merge reads null as an unknown device), and empties the queue of the ids it has forgotten. Never waits: records a write holds are skipped (FOR UPDATE SKIP LOCKED, primary-key order) and the ids they name stay queued for the next pass. One pass over every record; run at the end of run_account_deletions, and by purge_sync_retention when the queue is not empty. Not callable by any API role.';

-- Down step of 20261127001300_forget_installations_skips_locked_records.sql:
-- forget_queued_installations as 20261127001100_installations_forgotten_by_queue.sql
-- made it.
create or replace function app_private.forget_queued_installations()
returns void
language plpgsql
volatile
security invoker
set search_path = ''
as $$
declare
  v_ids jsonb;
begin
  -- Take the queue; ids a concurrent pass holds are its to forget. An id
  -- another user who can still sign in registered before it was queued (one
  -- phone, two accounts) stays theirs; a device registered later is a new
  -- account on the deleted one's phone, which must not inherit its writes.
  with taken as (
    delete from app_private.installations_to_forget q
     where q.installation_id in (select t.installation_id from app_private.installations_to_forget t for update skip locked)
    returning q.installation_id, q.queued_at
  )
  -- An object: `?` finds a key by binary search, so a long queue costs each
  -- record a few comparisons, not one per id.
  select coalesce(jsonb_object_agg(t.installation_id::text, true), '{}') into v_ids
    from taken t
   where not exists (select 1 from app_private.devices d join auth.users u on u.id = d.user_id
                      where d.installation_id = t.installation_id and u.deleted_at is null and d.created_at <= t.queued_at);
  if v_ids = '{}' then
    return;
  end if;
  update app_private.sync_records s
     set field_versions = (
       select jsonb_object_agg(e.key, case when v_ids ? (e.value ->> 'd') then jsonb_set(e.value, '{d}', 'null') else e.value end)
         from jsonb_each(s.field_versions) e)
   where exists (select 1 from jsonb_each(s.field_versions) e where v_ids ? (e.value ->> 'd'));
end
$$;
comment on function app_private.forget_queued_installations() is
  'Empties app_private.installations_to_forget: sets d (the writing device) to null in every sync_records.field_versions entry stamped by a queued installation id that no other user who can still sign in registered before it was queued (the merge reads null as an unknown device). One pass over every record; run at the end of run_account_deletions, and by purge_sync_retention when the queue is not empty. Not callable by any API role.';

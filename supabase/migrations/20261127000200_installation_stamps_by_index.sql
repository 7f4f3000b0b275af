-- What: the account purge finds the sync records an installation stamped by
-- an index instead of reading every record. app_private.sync_record_devices
-- (field_versions) lists the installation ids a record's field versions name
-- (`d`); a GIN index on it (sync_records_devices_idx) finds the records of a
-- given installation, and app_private.forget_installations looks them up
-- there. An index on app_private.devices(installation_id) answers its "does
-- another user still register this id" check the same way.
-- Why: forget_installations (20261126002920) read all of sync_records on
-- every purge run that deleted someone (jsonb_path_exists over every record:
-- 1.1 s per 500,000 records, whatever the user wrote), so its cost grew with
-- the whole app, not with the deleted user's rows.
-- Cost: each write of a sync record computes the list (a jsonb_each of its
-- field versions) and adds its GIN entries (one or two ids per record); the
-- field versions are indexed now, so an update is never HOT: a bulk update
-- of 100,000 records took 23-27 us per record instead of 10, a bulk insert
-- 21 instead of 12. The scrub among 500,000 records: 6.5 ms instead of
-- 0.48 s for one installation, 49 ms instead of 1.16 s for twenty
-- (docs/account-deletion.md).
-- pgTAP 507 (the purge reads sync_records by index only).
--
-- Down step: supabase/rollbacks/20261127000200_installation_stamps_by_index.down.sql.

create function app_private.sync_record_devices(p_field_versions jsonb)
returns text[]
language sql
immutable
parallel safe
set search_path = ''
as $$
  select coalesce(array_agg(distinct e.value ->> 'd') filter (where e.value ->> 'd' is not null), '{}')
    from pg_catalog.jsonb_each(p_field_versions) e
$$;
comment on function app_private.sync_record_devices(jsonb) is
  'The installation ids (`d`) a sync_records.field_versions names, each once: the key of sync_records_devices_idx, by which the account purge finds what a deleted user''s devices wrote.';
revoke all on function app_private.sync_record_devices(jsonb) from public, anon, authenticated, service_role;

-- fastupdate off: a lookup would otherwise read the whole pending list (up to
-- gin_pending_list_limit, 4 MB, until a vacuum), once per deleted user.
create index sync_records_devices_idx on app_private.sync_records using gin (app_private.sync_record_devices(field_versions))
  with (fastupdate = off);
comment on index app_private.sync_records_devices_idx is
  'Account deletion: app_private.forget_installations() finds the records an installation stamped.';

create index devices_installation_id_idx on app_private.devices (installation_id);
comment on index app_private.devices_installation_id_idx is
  'Account deletion: app_private.forget_installations() keeps an installation id another user still registers (a shared phone).';

create or replace function app_private.forget_installations(p_installation_ids uuid[])
returns void
language plpgsql
volatile
security invoker
set search_path = ''
as $$
declare
  v_ids text[];
begin
  -- Ids another user still registers (one phone, two accounts) stay theirs.
  v_ids := array(
    select distinct i::text from unnest(p_installation_ids) i
     where not exists (select 1 from app_private.devices d where d.installation_id = i));
  if cardinality(v_ids) = 0 then
    return;
  end if;
  -- By sync_records_devices_idx: only the records these installations stamped.
  update app_private.sync_records s
     set field_versions = (
       select jsonb_object_agg(e.key, case when (e.value ->> 'd') = any (v_ids) then jsonb_set(e.value, '{d}', 'null') else e.value end)
         from jsonb_each(s.field_versions) e)
   where app_private.sync_record_devices(s.field_versions) && v_ids;
end
$$;
comment on function app_private.forget_installations(uuid[]) is
  'The account purge, once per run: sets d (the writing device) to null in every sync_records.field_versions entry stamped by one of these installation ids that no device row registers any more (the merge reads null as an unknown device). Finds the records by sync_records_devices_idx: costs by the records those installations stamped. Not callable by any API role.';

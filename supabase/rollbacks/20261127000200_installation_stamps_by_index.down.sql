-- Down step of 20261127000200_installation_stamps_by_index.sql:
-- forget_installations as 20261126002920_purge_forgets_installation_ids.sql
-- made it (a pass over every record), and the indexes and their function go.
create or replace function app_private.forget_installations(p_installation_ids uuid[])
returns void
language plpgsql
volatile
security invoker
set search_path = ''
as $$
declare
  v_ids jsonb;
begin
  -- Ids another user still registers (one phone, two accounts) stay theirs.
  v_ids := to_jsonb(array(
    select distinct i::text from unnest(p_installation_ids) i
     where not exists (select 1 from app_private.devices d where d.installation_id = i)));
  if jsonb_array_length(v_ids) = 0 then
    return;
  end if;
  update app_private.sync_records s
     set field_versions = (
       select jsonb_object_agg(e.key, case when v_ids ? (e.value ->> 'd') then jsonb_set(e.value, '{d}', 'null') else e.value end)
         from jsonb_each(s.field_versions) e)
   where jsonb_path_exists(s.field_versions, '$.* ? (@.d == $ids)', jsonb_build_object('ids', v_ids));
end
$$;
comment on function app_private.forget_installations(uuid[]) is
  'The account purge, once per run: sets d (the writing device) to null in every sync_records.field_versions entry stamped by one of these installation ids that no device row registers any more (the merge reads null as an unknown device). Reads every record. Not callable by any API role.';

drop index app_private.devices_installation_id_idx;
drop index app_private.sync_records_devices_idx;
drop function app_private.sync_record_devices(jsonb);

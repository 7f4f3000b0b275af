-- Down step of 20261128003100_ota_expo_client.sql: the column goes (with its
-- check and its insert grant; the Expo configs published are lost, the
-- manifests carry extra.tidesync only again), and maintain_release() is again
-- the one of 20261122040000_test_builds.sql.
create or replace function app_private.maintain_release()
returns trigger
language plpgsql
security invoker
set search_path = ''
as $$
begin
  if tg_op = 'UPDATE' then
    -- Only status and rollout change after publication (column grants say so
    -- for the service role; this says so for everyone else).
    if (new.platform, new.channel, new.kind, new.version, new.build_number, new.runtime_version, new.release_notes,
        new.artifact_path, new.artifact_url, new.artifact_sha256, new.artifact_size, new.artifact_content_type, new.assets)
       is distinct from
       (old.platform, old.channel, old.kind, old.version, old.build_number, old.runtime_version, old.release_notes,
        old.artifact_path, old.artifact_url, old.artifact_sha256, old.artifact_size, old.artifact_content_type, old.assets) then
      raise exception 'a published release is immutable: publish a new build instead' using errcode = '22023';
    end if;
    new.id := old.id;
    new.created_at := old.created_at;
  end if;
  new.updated_at := now();
  return new;
end
$$;
alter table app_private.releases drop column if exists expo_client;

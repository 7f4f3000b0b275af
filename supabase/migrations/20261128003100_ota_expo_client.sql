-- What: app_private.releases.expo_client, an OTA update's public Expo app
-- config (jsonb object; null for none and for every binary), published with
-- it by CI (POST /v1/releases `expo_client`) and served as the manifest's
-- extra.expoClient. Immutable like the rest of a published release:
-- maintain_release() now counts it among the columns that never change.
-- Why: expo-constants reads Constants.expoConfig from extra.expoClient while
-- the app runs a downloaded update (as Expo's reference server and EAS Update
-- send it); our manifests carried only extra.tidesync, so after taking an
-- update from tidesync the app saw Constants.expoConfig === null.
-- The api function checks the size (MAX_EXPO_CLIENT_BYTES) and what jsonb can
-- store; the checks here keep the kind and shape, as for assets.
-- Tests: pgTAP 141-release-expo-client; tests/integration/expo-updates.test.ts, releases.test.ts.
-- Down step: supabase/rollbacks/20261128003100_ota_expo_client.down.sql

alter table app_private.releases
  add column expo_client jsonb
    constraint releases_expo_client_only_ota check (expo_client is null or (kind = 'ota' and jsonb_typeof(expo_client) = 'object'));
comment on column app_private.releases.expo_client is
  'OTA only: the app''s public Expo config (npx expo config --json --type public), served as the manifest''s extra.expoClient (expo-constants'' Constants.expoConfig). Null: none.';

grant insert (expo_client) on app_private.releases to service_role;

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
        new.artifact_path, new.artifact_url, new.artifact_sha256, new.artifact_size, new.artifact_content_type, new.assets,
        new.expo_client)
       is distinct from
       (old.platform, old.channel, old.kind, old.version, old.build_number, old.runtime_version, old.release_notes,
        old.artifact_path, old.artifact_url, old.artifact_sha256, old.artifact_size, old.artifact_content_type, old.assets,
        old.expo_client) then
      raise exception 'a published release is immutable: publish a new build instead' using errcode = '22023';
    end if;
    new.id := old.id;
    new.created_at := old.created_at;
  end if;
  new.updated_at := now();
  return new;
end
$$;

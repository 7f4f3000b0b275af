-- What: test-build distribution. Tester groups (members, channels they may
-- receive), releases per (platform, channel) — installable binaries and
-- over-the-air (OTA) JS updates for a runtime version — the update policy of
-- each (platform, channel) (minimum supported build, and how urgent an update
-- is below it), and the webhook deliveries that made each release (so a CI
-- retry is idempotent).
-- Why: POST/PATCH /v1/releases (CI, Standard Webhooks), GET /v1/releases/check
-- and the Expo Updates manifest endpoint; docs/test-builds.md tells the model.
--
-- Who may see what is decided here, by RLS:
--   * a caller sees the releases and update policies of exactly the channels
--     app_private.receivable_release_channels() names: channels granted to a
--     group they are a member of, and channels granted to an `everyone` group
--     (e.g. `production`), which anon callers see too. A channel the caller may
--     not receive is indistinguishable from a channel with no release;
--   * the release manager is the service role (CI through the signed webhook,
--     or a dashboard with the service key). It creates releases and changes
--     only their status and rollout (column grants), and manages the groups.
-- Rollout percentages and "above your build" are applied by the api function
-- (functions/_shared/releases/plan-update-check.ts): they depend on the device.
--
-- rollback: supabase/rollbacks/20261122040000_test_builds.down.sql

-- ------------------------------------------------------------ tester groups
create table app_private.tester_groups (
  id uuid primary key default gen_random_uuid(),
  name text not null constraint tester_groups_name_length check (char_length(name) between 1 and 100),
  everyone boolean not null default false,
  created_at timestamptz not null default now(),
  constraint tester_groups_name_key unique (name)
);
comment on table app_private.tester_groups is
  'Groups of testers (TestFlight beta groups, Firebase tester groups). A group receives the channels tester_group_channels grants it.';
comment on column app_private.tester_groups.everyone is
  'True for a group that stands for every caller, signed in or not (the public channel, e.g. production): its channels need no membership.';

create table app_private.tester_group_members (
  group_id uuid not null references app_private.tester_groups (id) on delete cascade,
  user_id uuid not null references auth.users (id) on delete cascade,
  added_at timestamptz not null default now(),
  primary key (group_id, user_id)
);
comment on table app_private.tester_group_members is 'Which users are in which tester group.';
create index tester_group_members_user_id_idx on app_private.tester_group_members (user_id);
comment on index app_private.tester_group_members_user_id_idx is 'The groups of one user (receivable_release_channels(), the read policy).';

create table app_private.tester_group_channels (
  group_id uuid not null references app_private.tester_groups (id) on delete cascade,
  channel text not null constraint tester_group_channels_channel_shape check (channel ~ '^[a-z0-9][a-z0-9_-]{0,31}$'),
  primary key (group_id, channel)
);
comment on table app_private.tester_group_channels is 'The release channels (internal, beta, production, …) each tester group may receive.';

-- ---------------------------------------------------------------- releases
create table app_private.releases (
  id uuid primary key default gen_random_uuid(),
  platform text not null constraint releases_platform_known check (platform in ('ios', 'android', 'web')),
  channel text not null constraint releases_channel_shape check (channel ~ '^[a-z0-9][a-z0-9_-]{0,31}$'),
  kind text not null constraint releases_kind_known check (kind in ('binary', 'ota')),
  version text not null constraint releases_version_length check (char_length(version) between 1 and 64),
  build_number integer not null constraint releases_build_number_not_negative check (build_number >= 0),
  runtime_version text constraint releases_runtime_version_length check (char_length(runtime_version) between 1 and 64),
  release_notes text not null default '' constraint releases_release_notes_length check (char_length(release_notes) <= 4000),
  artifact_path text constraint releases_artifact_path_shape
    check (char_length(artifact_path) between 1 and 1024 and artifact_path !~ '(^/|(^|/)\.\.?(/|$)|//)'),
  artifact_url text constraint releases_artifact_url_https check (char_length(artifact_url) <= 2048 and artifact_url ~ '^https://[^\s]+$'),
  artifact_sha256 text not null constraint releases_artifact_sha256_hex check (artifact_sha256 ~ '^[0-9a-f]{64}$'),
  artifact_size bigint not null constraint releases_artifact_size_positive check (artifact_size > 0),
  artifact_content_type text not null default 'application/octet-stream'
    constraint releases_artifact_content_type_length check (char_length(artifact_content_type) between 1 and 255),
  assets jsonb not null default '[]'::jsonb,
  status text not null default 'active' constraint releases_status_known check (status in ('active', 'paused', 'rolled_back')),
  rollout_percentage integer not null default 100 constraint releases_rollout_percentage_range check (rollout_percentage between 0 and 100),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  constraint releases_one_artifact check ((artifact_path is null) <> (artifact_url is null)),
  constraint releases_ota_has_runtime_version check (kind <> 'ota' or runtime_version is not null),
  constraint releases_assets_only_ota check (jsonb_typeof(assets) = 'array' and (kind = 'ota' or assets = '[]'::jsonb))
);
comment on table app_private.releases is
  'Test and production builds per (platform, channel): installable binaries and OTA updates (Expo Updates) for a runtime version. Published by CI through POST /v1/releases; see docs/test-builds.md.';
comment on column app_private.releases.build_number is 'The build number (iOS CFBundleVersion, Android versionCode); "newer" means a higher build number. Unique per (platform, channel) among binaries.';
comment on column app_private.releases.runtime_version is 'The Expo runtime version an OTA update runs on (required for kind ota); a binary may carry the one it embeds.';
comment on column app_private.releases.artifact_path is 'Object path in the private artifact bucket (Supabase Storage); download links are signed, expiring URLs. Exactly one of artifact_path, artifact_url.';
comment on column app_private.releases.artifact_url is 'An https URL CI provides instead (EAS, TestFlight, Play internal sharing), handed out as is.';
comment on column app_private.releases.artifact_sha256 is 'Lower-case hex SHA-256 of the artifact (for an OTA update: of its launch asset, the JS bundle).';
comment on column app_private.releases.assets is 'OTA only: the update''s other assets, [{path|url, sha256, content_type, file_extension}] (validated by the api function).';
comment on column app_private.releases.status is 'active: offered; paused: held back (never offered); rolled_back: withdrawn (never offered; the previous release is offered again).';
comment on column app_private.releases.rollout_percentage is 'Share of devices offered this release, assigned deterministically per (release, device); raising it only adds devices.';

create unique index releases_binary_build_key on app_private.releases (platform, channel, build_number) where kind = 'binary';
comment on index app_private.releases_binary_build_key is 'One binary per build number on a (platform, channel).';
create index releases_channel_lookup_idx on app_private.releases (channel, platform, kind, build_number desc, created_at desc);
comment on index app_private.releases_channel_lookup_idx is 'The update check and the Expo manifest: newest releases of one (channel, platform, kind); also the column the read policy filters on.';

create table app_private.release_update_policies (
  platform text not null constraint release_update_policies_platform_known check (platform in ('ios', 'android', 'web')),
  channel text not null constraint release_update_policies_channel_shape check (channel ~ '^[a-z0-9][a-z0-9_-]{0,31}$'),
  minimum_build_number integer not null default 0 constraint release_update_policies_minimum_not_negative check (minimum_build_number >= 0),
  below_minimum_level text not null default 'required' constraint release_update_policies_level_known check (below_minimum_level in ('optional', 'required')),
  updated_at timestamptz not null default now(),
  primary key (channel, platform)
);
comment on table app_private.release_update_policies is
  'Per (platform, channel): the minimum supported build, and the update level a caller below it gets (required: the app blocks until updated). No row: minimum 0.';

create table app_private.release_webhook_deliveries (
  webhook_id text primary key constraint release_webhook_deliveries_id_length check (char_length(webhook_id) between 1 and 255),
  release_id uuid not null references app_private.releases (id) on delete cascade,
  received_at timestamptz not null default now()
);
comment on table app_private.release_webhook_deliveries is
  'Each Standard Webhooks delivery (webhook-id) applied to releases, once: a retried delivery answers with the release it made or changed, and changes nothing.';
create index release_webhook_deliveries_release_id_idx on app_private.release_webhook_deliveries (release_id);
comment on index app_private.release_webhook_deliveries_release_id_idx is 'Covers the foreign key (deleting a release).';

-- ------------------------------------------------------------ the invariants
create function app_private.maintain_release()
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
comment on function app_private.maintain_release() is
  'BEFORE INSERT/UPDATE trigger of app_private.releases: a published release keeps its build and artifact (only status and rollout change); stamps updated_at.';
revoke all on function app_private.maintain_release() from public, anon, authenticated, service_role;

create trigger releases_10_maintain
  before insert or update on app_private.releases
  for each row execute function app_private.maintain_release();

-- --------------------------------------------------- who receives a channel
-- Security definer, on purpose: the caller must not read the group tables
-- (who else tests what), yet their own set of channels decides what they
-- see. It answers only for the caller (auth.uid(); none for anon), reads
-- nothing else back, and is evaluated once per statement in the policies.
create function app_private.receivable_release_channels()
returns text[]
language sql
stable
security definer
set search_path = ''
as $$
  select coalesce(array_agg(distinct gc.channel order by gc.channel), array[]::text[])
  from app_private.tester_group_channels gc
  join app_private.tester_groups g on g.id = gc.group_id
  where g.everyone
     or exists (select 1 from app_private.tester_group_members m where m.group_id = g.id and m.user_id = (select auth.uid()))
$$;
comment on function app_private.receivable_release_channels() is
  'The release channels the caller may receive: those of their tester groups and of every `everyone` group. The one rule the release read policies apply.';
revoke all on function app_private.receivable_release_channels() from public, anon, authenticated, service_role;
grant execute on function app_private.receivable_release_channels() to anon, authenticated;

-- ------------------------------------------------------------------ privileges
-- The Expo Updates endpoint serves apps that send no token (expo-updates'
-- static request headers): those requests run as anon, so anon needs to reach
-- the schema. It reaches nothing in it but the release tables' SELECT (RLS:
-- `everyone` channels only) and receivable_release_channels(); 400-releases
-- pins that. app_private is not exposed through the Data API.
grant usage on schema app_private to anon;
alter table app_private.tester_groups enable row level security;
alter table app_private.tester_group_members enable row level security;
alter table app_private.tester_group_channels enable row level security;
alter table app_private.releases enable row level security;
alter table app_private.release_update_policies enable row level security;
alter table app_private.release_webhook_deliveries enable row level security;

revoke all on app_private.tester_groups, app_private.tester_group_members, app_private.tester_group_channels,
              app_private.releases, app_private.release_update_policies, app_private.release_webhook_deliveries
  from public, anon, authenticated, service_role;

grant select, insert, update, delete on app_private.tester_groups, app_private.tester_group_members,
                                        app_private.tester_group_channels to service_role;
grant select on app_private.tester_group_members to authenticated;
grant select on app_private.releases, app_private.release_update_policies to anon, authenticated, service_role;
grant insert (platform, channel, kind, version, build_number, runtime_version, release_notes, artifact_path, artifact_url,
              artifact_sha256, artifact_size, artifact_content_type, assets, status, rollout_percentage)
  on app_private.releases to service_role;
grant update (status, rollout_percentage) on app_private.releases to service_role;
grant insert, update (minimum_build_number, below_minimum_level, updated_at) on app_private.release_update_policies to service_role;
grant select, insert on app_private.release_webhook_deliveries to service_role;

-- ------------------------------------------------------------------ policies
create policy "Release managers can read tester groups"
  on app_private.tester_groups for select to service_role using (true);
create policy "Release managers can create tester groups"
  on app_private.tester_groups for insert to service_role with check (true);
create policy "Release managers can update tester groups"
  on app_private.tester_groups for update to service_role using (true) with check (true);
create policy "Release managers can delete tester groups"
  on app_private.tester_groups for delete to service_role using (true);
comment on policy "Release managers can read tester groups" on app_private.tester_groups is 'Groups are managed by the service role (dashboard, scripts); users never list them.';
comment on policy "Release managers can create tester groups" on app_private.tester_groups is 'Groups are managed by the service role.';
comment on policy "Release managers can update tester groups" on app_private.tester_groups is 'Groups are managed by the service role.';
comment on policy "Release managers can delete tester groups" on app_private.tester_groups is 'Groups are managed by the service role.';

create policy "Users can read their own tester memberships"
  on app_private.tester_group_members for select to authenticated using (user_id = (select auth.uid()));
create policy "Release managers can read tester memberships"
  on app_private.tester_group_members for select to service_role using (true);
create policy "Release managers can add testers"
  on app_private.tester_group_members for insert to service_role with check (true);
create policy "Release managers can update tester memberships"
  on app_private.tester_group_members for update to service_role using (true) with check (true);
create policy "Release managers can remove testers"
  on app_private.tester_group_members for delete to service_role using (true);
comment on policy "Users can read their own tester memberships" on app_private.tester_group_members is 'A user sees that they are a tester, never who else is.';
comment on policy "Release managers can read tester memberships" on app_private.tester_group_members is 'Memberships are managed by the service role.';
comment on policy "Release managers can add testers" on app_private.tester_group_members is 'Memberships are managed by the service role.';
comment on policy "Release managers can update tester memberships" on app_private.tester_group_members is 'Memberships are managed by the service role.';
comment on policy "Release managers can remove testers" on app_private.tester_group_members is 'Memberships are managed by the service role.';

create policy "Release managers can read group channels"
  on app_private.tester_group_channels for select to service_role using (true);
create policy "Release managers can grant channels"
  on app_private.tester_group_channels for insert to service_role with check (true);
create policy "Release managers can update group channels"
  on app_private.tester_group_channels for update to service_role using (true) with check (true);
create policy "Release managers can revoke channels"
  on app_private.tester_group_channels for delete to service_role using (true);
comment on policy "Release managers can read group channels" on app_private.tester_group_channels is 'Channel grants are managed by the service role; users learn only their own result (receivable_release_channels()).';
comment on policy "Release managers can grant channels" on app_private.tester_group_channels is 'Channel grants are managed by the service role.';
comment on policy "Release managers can update group channels" on app_private.tester_group_channels is 'Channel grants are managed by the service role.';
comment on policy "Release managers can revoke channels" on app_private.tester_group_channels is 'Channel grants are managed by the service role.';

create policy "Callers can read releases of channels they may receive"
  on app_private.releases for select to anon, authenticated
  using (channel = any ((select app_private.receivable_release_channels())::text[]));
create policy "Release managers can read releases"
  on app_private.releases for select to service_role using (true);
create policy "Release managers can publish releases"
  on app_private.releases for insert to service_role with check (true);
create policy "Release managers can change release status and rollout"
  on app_private.releases for update to service_role using (true) with check (true);
comment on policy "Callers can read releases of channels they may receive" on app_private.releases is
  'Testers see the releases of their groups'' channels; everyone (anon too) those of `everyone` channels. Any other release is indistinguishable from none.';
comment on policy "Release managers can read releases" on app_private.releases is 'The release manager (service role: CI via the signed webhook) sees every release.';
comment on policy "Release managers can publish releases" on app_private.releases is 'Only the release manager publishes.';
comment on policy "Release managers can change release status and rollout" on app_private.releases is 'Only the release manager pauses, rolls back or changes the rollout (column grants: nothing else).';

create policy "Callers can read update policies of channels they may receive"
  on app_private.release_update_policies for select to anon, authenticated
  using (channel = any ((select app_private.receivable_release_channels())::text[]));
create policy "Release managers can read update policies"
  on app_private.release_update_policies for select to service_role using (true);
create policy "Release managers can set update policies"
  on app_private.release_update_policies for insert to service_role with check (true);
create policy "Release managers can change update policies"
  on app_private.release_update_policies for update to service_role using (true) with check (true);
comment on policy "Callers can read update policies of channels they may receive" on app_private.release_update_policies is
  'A caller reads the minimum build only of channels they may receive (no hint that another channel exists).';
comment on policy "Release managers can read update policies" on app_private.release_update_policies is 'The release manager sees every policy.';
comment on policy "Release managers can set update policies" on app_private.release_update_policies is 'Only the release manager sets the minimum build.';
comment on policy "Release managers can change update policies" on app_private.release_update_policies is 'Only the release manager changes the minimum build.';

create policy "Release managers can read webhook deliveries"
  on app_private.release_webhook_deliveries for select to service_role using (true);
create policy "Release managers can record webhook deliveries"
  on app_private.release_webhook_deliveries for insert to service_role with check (true);
comment on policy "Release managers can read webhook deliveries" on app_private.release_webhook_deliveries is 'Deliveries are the release manager''s bookkeeping.';
comment on policy "Release managers can record webhook deliveries" on app_private.release_webhook_deliveries is 'Recorded once per webhook-id, never changed.';

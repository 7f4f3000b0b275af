-- What: app_private.release_feedback, what testers say about a build: their
-- text, with the platform and build number of the device they sent it from.
-- Why: POST /v1/releases/{id}/feedback (docs/test-builds.md). A tester may
-- write only about a release they may see (the releases read policy decides,
-- inside this table's insert policy), only as themselves; they read back their
-- own feedback. Whoever manages releases (the service role) reads it all.
--
-- rollback: supabase/rollbacks/20261122040100_release_feedback.down.sql

create table app_private.release_feedback (
  id uuid primary key default gen_random_uuid(),
  release_id uuid not null references app_private.releases (id) on delete cascade,
  user_id uuid not null references auth.users (id) on delete cascade,
  device_id uuid references app_private.devices (id) on delete set null,
  platform text not null constraint release_feedback_platform_known check (platform in ('ios', 'android', 'web')),
  build_number integer not null constraint release_feedback_build_number_not_negative check (build_number >= 0),
  body text not null constraint release_feedback_body_length check (char_length(body) between 1 and 4000),
  created_at timestamptz not null default now()
);
comment on table app_private.release_feedback is
  'Tester feedback on a release, with the sending device''s platform and build. Written by POST /v1/releases/{id}/feedback; read by the release manager (service role).';
comment on column app_private.release_feedback.device_id is 'The device of the session that sent it (null when that session had registered none, or the device is gone).';
comment on column app_private.release_feedback.build_number is 'The build the tester was running when writing (from the request, as the app reports it).';

create index release_feedback_release_id_idx on app_private.release_feedback (release_id, created_at);
comment on index app_private.release_feedback_release_id_idx is 'Feedback of one release, oldest first (the release manager''s view; covers the foreign key).';
create index release_feedback_user_id_idx on app_private.release_feedback (user_id);
comment on index app_private.release_feedback_user_id_idx is 'The read policy (own feedback) and the foreign key to auth.users.';
create index release_feedback_device_id_idx on app_private.release_feedback (device_id);
comment on index app_private.release_feedback_device_id_idx is 'Covers the foreign key to app_private.devices.';

alter table app_private.release_feedback enable row level security;
revoke all on app_private.release_feedback from public, anon, authenticated, service_role;
grant select on app_private.release_feedback to authenticated, service_role;
grant insert (release_id, user_id, device_id, platform, build_number, body) on app_private.release_feedback to authenticated;

create policy "Testers can send feedback on releases they may see"
  on app_private.release_feedback for insert to authenticated
  with check (
    user_id = (select auth.uid())
    -- Subject to the releases read policy: a release of a channel the caller
    -- may not receive does not exist here.
    and exists (select 1 from app_private.releases r where r.id = release_id)
    and (device_id is null or exists (select 1 from app_private.devices d where d.id = device_id))
  );
comment on policy "Testers can send feedback on releases they may see" on app_private.release_feedback is
  'As themselves, about a release the releases read policy shows them, from one of their own devices (the devices read policy).';

create policy "Testers can read their own feedback"
  on app_private.release_feedback for select to authenticated using (user_id = (select auth.uid()));
comment on policy "Testers can read their own feedback" on app_private.release_feedback is 'A tester reads back what they sent, nothing of others.';

create policy "Release managers can read feedback"
  on app_private.release_feedback for select to service_role using (true);
comment on policy "Release managers can read feedback" on app_private.release_feedback is 'Whoever manages releases (service role) reads all feedback.';

-- What: app_private.release_update_policies.set_by_build_number, the build
-- number of the binary whose publish set the row's policy. The publish
-- (POST /v1/releases with update_policy, functions/api/releases/release-store.ts)
-- replaces a (platform, channel)'s policy only when its build number is at
-- least that one (or the column is null: any build may replace it), so the
-- policy in force is the one the highest build published with a policy
-- carries; a higher build may still lower the minimum on purpose. The
-- service role may update the column (the publish's upsert).
-- Backfill: a publish writes the release and the policy in one transaction,
-- so the policy's updated_at is that release's created_at (both now()); a
-- row no binary of its (platform, channel) matches (set by hand, or its
-- build deleted) stays null.
-- Why: the upsert was last-write-wins whatever the build number: a lower
-- build published after a higher one (a hotfix branch, a slower parallel
-- pipeline, an old CI run re-run) lowered the minimum without anyone
-- choosing to: after 520 with minimum 520, 515 with minimum 480 let a
-- device on 490 off its required update.
-- Tests: tests/integration/releases.test.ts ("the channel's minimum is the
-- one the highest build published with one carries"), pgTAP
-- 157-update-policy-set-by-build; docs/test-builds.md, docs/security-model.md.
-- Down step: supabase/rollbacks/20261128004700_update_policy_kept_by_highest_build.down.sql.

alter table app_private.release_update_policies
  add column set_by_build_number integer
    constraint release_update_policies_set_by_not_negative check (set_by_build_number >= 0);
comment on column app_private.release_update_policies.set_by_build_number is
  'The build number of the binary whose publish set this policy: a publish with a lower build number leaves the policy as it is. Null: any publish may replace it (set by hand, or before 20261128004700 with no matching build).';

update app_private.release_update_policies p
set set_by_build_number = (
  select max(r.build_number) from app_private.releases r
  where r.platform = p.platform and r.channel = p.channel and r.kind = 'binary' and r.created_at = p.updated_at
);

grant update (set_by_build_number) on app_private.release_update_policies to service_role;

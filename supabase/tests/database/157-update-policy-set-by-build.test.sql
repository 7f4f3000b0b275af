-- app_private.release_update_policies.set_by_build_number
-- (20261128004700_update_policy_kept_by_highest_build.sql): the build whose
-- publish set the policy, which the release manager's publish writes with the
-- policy (a lower build then leaves it: tests/integration/releases.test.ts);
-- null for a policy set by hand; callers only read it.
begin;
select plan(5);

select col_type_is('app_private', 'release_update_policies', 'set_by_build_number', 'integer', 'set_by_build_number is an integer');
select col_is_null('app_private', 'release_update_policies', 'set_by_build_number', 'set_by_build_number is optional (null: any publish may replace the policy)');
select ok(
  has_column_privilege('service_role', 'app_private.release_update_policies', 'set_by_build_number', 'insert')
  and has_column_privilege('service_role', 'app_private.release_update_policies', 'set_by_build_number', 'update'),
  'the release manager writes set_by_build_number with the policy'
);
select ok(
  not has_column_privilege('authenticated', 'app_private.release_update_policies', 'set_by_build_number', 'update')
  and not has_column_privilege('anon', 'app_private.release_update_policies', 'set_by_build_number', 'update')
  and not has_column_privilege('authenticated', 'app_private.release_update_policies', 'set_by_build_number', 'insert')
  and not has_column_privilege('anon', 'app_private.release_update_policies', 'set_by_build_number', 'insert'),
  'callers cannot write it'
);
select throws_ok(
  $$ insert into app_private.release_update_policies (platform, channel, minimum_build_number, set_by_build_number) values ('ios', 'beta-157', 1, -1) $$,
  '23514', null, 'a build number is never negative'
);

select * from finish();
rollback;

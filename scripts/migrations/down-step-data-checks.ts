// What a down step must do with data, not only with the schema: a check here
// seeds rows right before its down step runs (as the admin, on the schema the
// later down steps left) and asserts right after it that a promise the
// migration made still holds. `npm run test:migrations` runs them.

export interface DownStepDataCheck {
  /** The migration whose down step is checked. */
  stem: string;
  /** What must hold after the down step, said as the test's name. */
  name: string;
  /** SQL run before the down step. */
  seed: string;
  /** One query returning one row: ok (boolean) and detail (text, shown when not ok). It cleans up after itself. */
  check: string;
}

const QUEUED = "d0e00000-0000-4000-8000-000000000001";
const RECORD = "d0e00000-0000-4000-8000-000000000002";

const SWEPT = "d0e00000-0000-4000-8000-000000000003";

const STAMP_USER = "d0e00000-0000-4000-8000-000000000004";
const STAMP_DEVICE = "d0e00000-0000-4000-8000-000000000005";
const STAMP_INSTALLATION = "d0e00000-0000-4000-8000-000000000006";
const STAMPED = "d0e00000-0000-4000-8000-000000000007";

export const DOWN_STEP_DATA_CHECKS: DownStepDataCheck[] = [
  {
    // The code it rolls back to tells devices by installation id: a stamp
    // naming a device row must name that row's installation again.
    stem: "20261128001200_merge_tells_devices_by_row",
    name: "a stamp naming a device row names its installation again",
    seed: `
      insert into auth.users (instance_id, id, aud, role, email, raw_app_meta_data, raw_user_meta_data, created_at, updated_at)
      values ('00000000-0000-0000-0000-000000000000', '${STAMP_USER}', 'authenticated', 'authenticated', 'down-step-stamp@test.tidesync.dev',
              '{}', '{}', now(), now());
      insert into app_private.devices (id, user_id, installation_id, platform, app_version, build_number, last_seen_at, revoked_at)
      values ('${STAMP_DEVICE}', '${STAMP_USER}', '${STAMP_INSTALLATION}', 'ios', '1.0.0', 1, now(), now());
      insert into app_private.sync_records (collection, id, scope_id, version, field_versions)
      values ('tasks', '${STAMPED}', '${STAMPED}', 2, '{"*": {"v": 1, "d": null}, "title": {"v": 2, "d": "${STAMP_DEVICE}"}}');`,
    check: `
      with gone as (
        delete from app_private.sync_records where collection = 'tasks' and id = '${STAMPED}' returning field_versions
      ), user_gone as (
        delete from auth.users where id = '${STAMP_USER}'
      )
      select coalesce(bool_and(field_versions = '{"*": {"v": 1, "d": null}, "title": {"v": 2, "d": "${STAMP_INSTALLATION}"}}'), false) as ok,
             'field_versions after the down step: ' || coalesce(string_agg(field_versions::text, ', '), 'the record is gone') as detail
        from gone`,
  },
  {
    // A sweep under way holds the ids it took off the queue: they go back,
    // with when they were queued (the shared-phone rule compares with it).
    stem: "20261127002210_forget_installations_within_budget",
    name: "the ids of a sweep under way go back to the queue with when they were queued",
    seed: `update app_private.installation_sweep set ids = '{"${SWEPT}": "2026-11-01T00:00:00+00:00"}'`,
    check: `
      with gone as (
        delete from app_private.installations_to_forget where installation_id = '${SWEPT}' returning queued_at
      )
      select coalesce(bool_and(queued_at = '2026-11-01T00:00:00+00:00'), false) as ok,
             'queued after the down step: ' || coalesce(string_agg(queued_at::text, ', '), 'nothing') as detail
        from gone`,
  },
  {
    // Rolling back the queue must not drop a deleted user's installation id
    // before it is forgotten: the rollback forgets what is queued first.
    stem: "20261127001100_installations_forgotten_by_queue",
    name: "the down step forgets the installation ids still queued before it drops the queue",
    seed: `
      insert into app_private.sync_records (collection, id, scope_id, version, field_versions)
      values ('tasks', '${RECORD}', '${RECORD}', 1, '{"*": {"v": 1, "d": "${QUEUED}"}}');
      insert into app_private.installations_to_forget (installation_id) values ('${QUEUED}');`,
    check: `
      with gone as (
        delete from app_private.sync_records where collection = 'tasks' and id = '${RECORD}' returning field_versions
      )
      select coalesce(bool_and(field_versions -> '*' ->> 'd' is null), false) as ok,
             'field_versions after the down step: ' || coalesce(string_agg(field_versions::text, ', '), 'the record is gone') as detail
        from gone`,
  },
];

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

export const DOWN_STEP_DATA_CHECKS: DownStepDataCheck[] = [
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

// The sample app's checks that keep its float and date columns to what the
// wire carries (migration 20261126002500: lists_position_finite,
// tasks_position_finite, tasks_due_date_range) are in the generated
// collection description, so a refusal by one of them is answered on its
// field (check_failed at /ops/<i>/data/<column>), not on the record as a whole.
import { expect, it } from "vitest";
import { findCollection } from "../../functions/_shared/collections.ts";
import { refusalError } from "../../functions/api/sync/db-refusal.ts";

it.each([
  ["lists", "lists_position_finite", "position"],
  ["tasks", "tasks_position_finite", "position"],
  ["tasks", "tasks_due_date_range", "due_date"],
])("%s: a 23514 of %s is answered on /ops/<i>/data/%s", (collection, constraint, column) => {
  const error = refusalError({ collection, id: "00000000-0000-4000-8000-000000000001", kind: "update", sqlstate: "23514", constraint }, 3, findCollection(collection));
  expect(error.code).toBe("VALIDATION_FAILED");
  expect(error.details).toEqual([{ field: `/ops/3/data/${column}`, code: "check_failed", message: `breaks the rule ${constraint}` }]);
});

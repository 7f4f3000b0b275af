// The pass that forgets deleted users' installation ids
// (app_private.forget_queued_installations, run by the account purge and the
// retention purge) never waits on a sync record a write holds: it forgets the
// id in the records it can lock, and keeps the id queued while a held record
// still names it; a later pass finishes. Waiting could deadlock with a push
// writing the same records in its own order.
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { adminSql, createTestUser } from "../support/harness.ts";
import { holdTransaction } from "../support/held-transactions.ts";
import { writeRows } from "../support/sync-records.ts";

async function stamps(ids: string[]): Promise<(string | null)[]> {
  const rows = await adminSql<{ id: string; d: string | null }[]>`
    select id::text, field_versions -> 'title' ->> 'd' as d from app_private.sync_records
     where collection = 'tasks' and id = any (${ids}::uuid[]) order by array_position(${ids}::uuid[], id)`;
  return rows.map((r) => r.d);
}

async function queued(installationId: string): Promise<boolean> {
  const [{ n }] = await adminSql<{ n: number }[]>`
    select count(*)::int as n from app_private.installations_to_forget where installation_id = ${installationId}`;
  return n === 1;
}

describe("forget_queued_installations", () => {
  it("skips a record a write holds and keeps its id queued until a later pass", async () => {
    const user = await createTestUser();
    const list = randomUUID();
    const [first, second] = [randomUUID(), randomUUID()];
    await writeRows(user, [
      { collection: "lists", id: list, data: { title: "L" } },
      { collection: "tasks", id: first, data: { list_id: list, title: "one" } },
      { collection: "tasks", id: second, data: { list_id: list, title: "two" } },
    ]);
    // Both tasks last written by a deleted user's device, whose id is queued.
    const gone = randomUUID();
    await adminSql`
      update app_private.sync_records set field_versions = jsonb_build_object('title', jsonb_build_object('v', 1, 'd', ${gone}::text))
       where collection = 'tasks' and id in (${first}, ${second})`;
    await adminSql`insert into app_private.installations_to_forget (installation_id) values (${gone})`;

    // A push holds the second task's record (its row lock) while the pass runs.
    const held = holdTransaction((tx) => tx`select 1 from app_private.sync_records where collection = 'tasks' and id = ${second} for update`);
    await held.ran;
    try {
      // A pass that waited on the held record would time out here.
      await adminSql.begin(async (tx) => {
        await tx`set local lock_timeout = '3s'`;
        await tx`select app_private.forget_queued_installations()`;
      });
      expect(await stamps([first, second])).toEqual([null, gone]);
      expect(await queued(gone)).toBe(true);
    } finally {
      held.commit();
      await held.done;
    }

    await adminSql`select app_private.forget_queued_installations()`;
    expect(await stamps([first, second])).toEqual([null, null]);
    expect(await queued(gone)).toBe(false);
  });
});

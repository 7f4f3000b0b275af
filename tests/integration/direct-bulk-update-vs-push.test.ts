// A one-statement bulk update through the Data API ("mark all done": PATCH /tasks?list_id=eq.L)
// locks the list's rows in the order it reads them (the heap's), a push the rows it names in id
// order: the two can cross (docs/sync.md "Limits and their errors", what remains). Postgres then
// rolls back the one whose deadlock_timeout ends first, the one that began waiting first: a push
// is run once more (the client sees nothing), a bulk update fails 40P01 (HTTP 500 from
// PostgREST) and the app retries it. Each interleaving is made with a held transaction.
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { adminSql, type ApiResponse, createTestUser, stack, type TestUser } from "../support/harness.ts";
import { holdTransaction, waitersOf } from "../support/held-transactions.ts";
import { requestLogLine } from "../support/request-log.ts";
import { asUser, push, pushOk, remove, upsert } from "../support/shared-lists.ts";

async function deadlockRetried(response: ApiResponse): Promise<boolean> {
  return (await requestLogLine(stack.logFile, response.headers.get("x-request-id")!)).deadlock_retried === true;
}

/**
 * Tasks in Alice's list, each with its version: a high id the bulk update reads first, a low id
 * it reads last and, `withMiddle`, one it reads between them. Where a row lands in the heap is
 * Postgres' choice (another test's deletes leave room in earlier pages): tasks that did not land
 * in the order written are deleted and written again under new ids.
 */
async function tasks(alice: TestUser, list: string, withMiddle = false) {
  for (let attempt = 1; ; attempt++) {
    const middle = withMiddle ? randomUUID() : undefined;
    const high = "ffffffff-" + randomUUID().slice(9);
    const low = "00000000-" + randomUUID().slice(9);
    const ids = [high, ...(middle ? [middle] : []), low];
    const versions: Record<string, number> = {};
    for (const id of ids) {
      const { results: [r] } = await pushOk(alice, { ops: [upsert("tasks", id, { list_id: list, title: id.slice(0, 4) })] });
      versions[id] = r.record!.version;
    }
    const order = await adminSql<{ id: string }[]>`select id::text from public.tasks where id = any (${ids}::uuid[]) order by ctid`;
    if (order.map((r) => r.id).join() === ids.join()) return { high, middle, low, versions };
    expect(attempt, "tasks written in the heap in the order written, within 10 attempts").toBeLessThan(10);
    await pushOk(alice, { ops: ids.map((id) => remove("tasks", id, versions[id])) });
  }
}

const markAllDone = (alice: TestUser, list: string) =>
  asUser(alice, (tx) => tx`update public.tasks set done = true where list_id = ${list}`).then(() => "ok", (e) => e.code as string);

describe("a Data API bulk update racing a push that edits some of its rows", () => {
  it("when the push waits first, the push is rolled back and run again: both apply", async () => {
    const alice = await createTestUser();
    const list = alice.userId;
    const { high, middle, low, versions } = await tasks(alice, list, true);
    if (!middle) throw new Error("no middle task"); // held meanwhile by another writer
    const held = holdTransaction((tx) => tx`select 1 from public.tasks where id = ${middle} for update`);
    await held.ran;
    // The bulk update locks `high`, waits for `middle`; the push locks `low`, waits for `high`.
    const bulk = markAllDone(alice, list);
    await waitersOf(await held.pid, 1);
    const pushed = push(alice, { ops: [upsert("tasks", high, { title: "h'" }, versions[high]), upsert("tasks", low, { title: "l'" }, versions[low])] });
    await waitersOf(await held.pid, 2);
    held.commit(); // the bulk update goes on to `low`: the push waited first
    const [bulkResult, response] = await Promise.all([bulk, pushed]);
    expect(bulkResult).toBe("ok");
    expect(response.status, response.text).toBe(200);
    expect(response.body.results.map((r: { status: string }) => r.status)).toEqual(["applied", "applied"]);
    expect(await deadlockRetried(response)).toBe(true);
  });

  it("when the bulk update waits first, it fails 40P01 (nothing of it kept) and the push applies", async () => {
    const alice = await createTestUser();
    const list = alice.userId;
    const { high, low, versions } = await tasks(alice, list);
    // A task of another list of hers, between the two by id: the push locks `low`, then waits for it.
    const other = randomUUID();
    await pushOk(alice, { ops: [upsert("lists", other, { title: "other" })] });
    const between = "80000000-" + randomUUID().slice(9);
    const { results: [b] } = await pushOk(alice, { ops: [upsert("tasks", between, { list_id: other, title: "b" })] });
    const held = holdTransaction((tx) => tx`select 1 from public.tasks where id = ${between} for update`);
    await held.ran;
    const pushed = push(alice, { ops: [
      upsert("tasks", high, { title: "h'" }, versions[high]), upsert("tasks", between, { title: "b'" }, b.record!.version),
      upsert("tasks", low, { title: "l'" }, versions[low]),
    ] });
    await waitersOf(await held.pid, 1);
    // The bulk update locks `high`, waits for `low` (the push's) ...
    const bulk = markAllDone(alice, list);
    await waitersOf(await held.pid, 2);
    held.commit(); // ... and the push, given `between`, waits for `high`: the bulk update waited first.
    const [bulkResult, response] = await Promise.all([bulk, pushed]);
    expect(bulkResult).toBe("40P01");
    expect(response.status, response.text).toBe(200);
    expect(response.body.results.map((r: { status: string }) => r.status)).toEqual(["applied", "applied", "applied"]);
    expect(await deadlockRetried(response)).toBe(false);
    // The app's retry of the bulk update then marks them all.
    expect(await markAllDone(alice, list)).toBe("ok");
    expect((await adminSql`select count(*)::int as n from public.tasks where list_id = ${list} and not done`)[0].n).toBe(0);
  });
});

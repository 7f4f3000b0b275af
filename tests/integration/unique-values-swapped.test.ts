// Two rows of a batch swapping values a unique rule holds (a reorder under unique (list_id,
// position)): a batch writes a table's edits in one statement, and Postgres checks a DEFERRABLE
// unique constraint at the end of that statement, so the swap passes; a constraint that is not
// deferrable, or a unique index, is checked row by row within it, so each op meets the other row's
// old value and both are refused (docs/sync.md, "The database has the last word").
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call } from "../support/harness.ts";
import { likeTasks, type ProbeStack, type ProbeUser, startProbeStack } from "../support/probe-stack.ts";
import { upsert } from "../support/shared-lists.ts";

const DEFERRABLE = "tidesync_test_swap_deferrable";
const IMMEDIATE = "tidesync_test_swap_immediate";

let probe: ProbeStack;
beforeAll(async () => {
  probe = await startProbeStack("swap", (["deferrable", "immediate"] as const).flatMap((kind) => [
    `create table public.tidesync_test_swap_${kind} (id uuid primary key, list_id uuid not null references public.lists (id) on delete cascade,
       name text not null, position integer not null,
       constraint tidesync_test_swap_${kind}_position_key unique (list_id, position)${kind === "deferrable" ? " deferrable initially immediate" : ""})`,
    ...likeTasks(`tidesync_test_swap_${kind}`, ["name", "position"]),
    `select app_private.enable_sync('public.tidesync_test_swap_${kind}', 'list_id')`,
  ]));
}, 180_000);
afterAll(async () => {
  await probe?.stop();
});

interface Result { status: string; record?: { version: number; data: { position: number } }; error?: { message: string } }
const push = async (u: ProbeUser, ops: unknown[]) =>
  (await call<{ results: Result[] }>("/v1/sync/batch", { method: "POST", token: u.token, body: { ops }, baseUrl: probe.apiUrl })).body.results;
const edit = (table: string, id: string, version: number, data: Record<string, unknown>) =>
  ({ op_id: randomUUID(), collection: table, record_id: id, type: "upsert", base_version: version, data });

/** Two rows of `table` at positions 1 and 2, then one batch swapping them; the batch's results and the rows after it. */
async function swap(table: string) {
  const u = await probe.newUser();
  const [a, b] = [randomUUID(), randomUUID()];
  const created = await push(u, [upsert(table, a, { list_id: u.userId, name: "a", position: 1 }), upsert(table, b, { list_id: u.userId, name: "b", position: 2 })]);
  expect(created.map((r) => r.status)).toEqual(["applied", "applied"]);
  const results = await push(u, [edit(table, a, created[0].record!.version, { position: 2 }), edit(table, b, created[1].record!.version, { position: 1 })]);
  const rows = await probe.admin.unsafe(`select name, position from public.${table} where list_id = $1 order by name`, [u.userId]);
  return { results, rows };
}

describe("a batch swapping two rows' values under a unique constraint", () => {
  it("DEFERRABLE (initially immediate): checked at the end of the statement, the swap is applied", async () => {
    const { results, rows } = await swap(DEFERRABLE);
    expect(results.map((r) => [r.status, r.record?.data.position])).toEqual([["applied", 2], ["applied", 1]]);
    expect(rows).toEqual([{ name: "a", position: 2 }, { name: "b", position: 1 }]);
  });

  it("not deferrable: checked row by row, each op meets the other's old value; both refused, nothing written", async () => {
    const { results, rows } = await swap(IMMEDIATE);
    expect(results.map((r) => [r.status, r.error?.message])).toEqual([
      ["rejected", `the value must be unique (${IMMEDIATE}_position_key)`],
      ["rejected", `the value must be unique (${IMMEDIATE}_position_key)`],
    ]);
    expect(rows).toEqual([{ name: "a", position: 1 }, { name: "b", position: 2 }]);
  });
});

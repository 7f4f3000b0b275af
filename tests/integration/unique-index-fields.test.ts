// A uniqueness rule written as a UNIQUE INDEX (the only way to make it case-insensitive or partial,
// and a common way even for plain columns) is refused 23505 naming the index, which backs no
// constraint: its refusal names the index's columns as a UNIQUE constraint's names the constraint's
// (docs/sync.md, "the database has the last word"), not just `/ops/i/data`.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call } from "../support/harness.ts";
import { likeTasks, type ProbeStack, type ProbeUser, startProbeStack } from "../support/probe-stack.ts";
import { upsert } from "../support/shared-lists.ts";

const TABLE = "tidesync_test_uidx_tags";

let probe: ProbeStack;
beforeAll(async () => {
  probe = await startProbeStack("uidx", [
    `create table public.tidesync_test_uidx_tags (id uuid primary key, list_id uuid not null references public.lists (id) on delete cascade,
       name text not null, code text not null, label text, archived boolean not null default false,
       constraint tidesync_test_uidx_tags_label unique (list_id, label))`,
    `create unique index tidesync_test_uidx_tags_name_ci on public.tidesync_test_uidx_tags (list_id, lower(name)) where not archived`,
    `create unique index tidesync_test_uidx_tags_code on public.tidesync_test_uidx_tags (list_id, code)`,
    ...likeTasks(TABLE, ["name", "code", "label", "archived"]),
    `select app_private.enable_sync('public.${TABLE}', 'list_id')`,
  ]);
}, 180_000);
afterAll(async () => {
  await probe?.stop();
});

const push = async (u: ProbeUser, ops: unknown[]) =>
  (await call("/v1/sync/batch", { method: "POST", token: u.token, body: { ops }, baseUrl: probe.apiUrl })).body;

/** The second of two creates in `u`'s personal list, the first taking what the second sets too. */
async function secondOf(u: ProbeUser, first: Record<string, unknown>, second: Record<string, unknown>) {
  const body = await push(u, [upsert(TABLE, randomUUID(), { list_id: u.userId, ...first }), upsert(TABLE, randomUUID(), { list_id: u.userId, ...second })]);
  expect(body.results[0].status).toBe("applied");
  return body.results[1];
}

const fields = (result: { error: { details: { field: string }[] } }) => result.error.details.map((d) => d.field);

describe("a push refused by a unique index names the index's columns, as a UNIQUE constraint's refusal does", () => {
  it("a UNIQUE constraint (list_id, label): both its columns", async () => {
    const u = await probe.newUser();
    const result = await secondOf(u, { name: "a", code: "a", label: "x" }, { name: "b", code: "b", label: "x" });
    expect(result.error).toMatchObject({ code: "VALIDATION_FAILED", message: `the value must be unique (${TABLE}_label)` });
    expect(fields(result)).toEqual(["/ops/1/data/label", "/ops/1/data/list_id"]);
  });

  it("a plain unique index (list_id, code): both its columns", async () => {
    const u = await probe.newUser();
    const result = await secondOf(u, { name: "a", code: "c" }, { name: "b", code: "c" });
    expect(result.error).toMatchObject({ code: "VALIDATION_FAILED", message: `the value must be unique (${TABLE}_code)` });
    expect(result.error.details[0]).toMatchObject({ code: "taken", message: "is already taken" });
    expect(fields(result)).toEqual(["/ops/1/data/code", "/ops/1/data/list_id"]);
  });

  it("a partial index on an expression (list_id, lower(name)) where not archived: the columns of its key, not of its predicate", async () => {
    const u = await probe.newUser();
    const result = await secondOf(u, { name: "Milk", code: "a" }, { name: "milk", code: "b" });
    expect(result.error).toMatchObject({ code: "VALIDATION_FAILED", message: `the value must be unique (${TABLE}_name_ci)` });
    expect(fields(result)).toEqual(["/ops/1/data/list_id", "/ops/1/data/name"]);
  });
});

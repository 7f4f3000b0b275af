// A record a push batch creates and deletes again is never written (docs/sync.md, "A record the
// batch creates and deletes again"), yet its create and its delete are judged by the database as
// the same ops alone would be: the answer never approves a write the table's policies,
// constraints or triggers refuse (a viewer's task, an id another user's row has, a delete from a
// table whose users may not delete).
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SyncOpResult } from "../../functions/_shared/schemas/sync.ts";
import { call, createTestUser } from "../support/harness.ts";
import { type ProbeStack, startProbeStack, syncedLikeTasks } from "../support/probe-stack.ts";
import { asUser, pullAll, pushOk, remove, sharedList, upsert } from "../support/shared-lists.ts";
import { ledger, syncState } from "../support/sync-records.ts";

const brief = (r: SyncOpResult) => [r.status, r.error?.code, r.record?.id];

describe("POST /v1/sync/batch: a create the batch deletes again is judged as that create alone", () => {
  it("a viewer's [create a task, edit it, delete it]: the create is FORBIDDEN as alone, the later ops refused with it, nothing stored", async () => {
    const { bob, list } = await sharedList("viewer");
    const alone = await pushOk(bob, { ops: [upsert("tasks", randomUUID(), { list_id: list, title: "alone" })] });
    expect(brief(alone.results[0])).toEqual(["rejected", "FORBIDDEN", undefined]);

    const start = await pullAll(bob);
    const id = randomUUID();
    const ops = [
      upsert("tasks", id, { list_id: list, title: "viewer create" }),
      upsert("tasks", id, { title: "edit" }),
      remove("tasks", id, null),
    ];
    const body = await pushOk(bob, { ops });
    // (Before: applied three times, without a record.)
    expect(body.results.map(brief)).toEqual([
      ["rejected", "FORBIDDEN", undefined], ["rejected", "FORBIDDEN", undefined], ["rejected", "NOT_FOUND", undefined],
    ]);
    expect(body.results[0].error).toEqual(alone.results[0].error);
    expect(await syncState("tasks", id)).toBeUndefined();
    expect((await pullAll(bob, start.cursor)).changes).toEqual([]);
    expect((await ledger(bob.userId)).filter((r) => r.record_id === id).map((r) => r.status)).toEqual(["rejected", "rejected", "rejected"]);
  });

  it("a create over an id another user's row has, deleted again: NOT_FOUND as alone, not applied", async () => {
    const alice = await createTestUser();
    const bob = await createTestUser();
    const taken = randomUUID();
    await asUser(alice, (tx) => tx`insert into public.tasks (id, list_id, title) values (${taken}, ${alice.userId}, 'alice')`);
    const alone = await pushOk(bob, { ops: [upsert("tasks", taken, { list_id: bob.userId, title: "bob" })] });
    expect(brief(alone.results[0])).toEqual(["rejected", "NOT_FOUND", undefined]);
    const body = await pushOk(bob, { ops: [upsert("tasks", taken, { list_id: bob.userId, title: "bob" }), remove("tasks", taken, null)] });
    expect(body.results.map(brief)).toEqual([["rejected", "NOT_FOUND", undefined], ["rejected", "NOT_FOUND", undefined]]);
    expect(body.results[0].error).toEqual(alone.results[0].error);
    // Another user's id as a list's (their personal list's id): taken, as alone.
    const listAlone = await pushOk(bob, { ops: [upsert("lists", alice.userId, { title: "mine?" })] });
    expect(brief(listAlone.results[0])).toEqual(["rejected", "NOT_FOUND", undefined]);
    const listBody = await pushOk(bob, { ops: [upsert("lists", alice.userId, { title: "mine?" }), remove("lists", alice.userId, null)] });
    expect(listBody.results.map(brief)).toEqual([["rejected", "NOT_FOUND", undefined], ["rejected", "NOT_FOUND", undefined]]);
  });

  it("an editor's, or a list created in the same batch: still applied without a record, nothing stored", async () => {
    const { bob, list } = await sharedList("editor");
    const [task, newList, inNewList] = [randomUUID(), randomUUID(), randomUUID()];
    const body = await pushOk(bob, { ops: [
      upsert("tasks", task, { list_id: list, title: "t" }), remove("tasks", task, null),
      upsert("lists", newList, { title: "N" }), upsert("tasks", inNewList, { list_id: newList, title: "t" }), remove("tasks", inNewList, null),
    ] });
    expect(body.results.map(brief)).toEqual([
      ["applied", undefined, undefined], ["applied", undefined, undefined],
      ["applied", undefined, newList], ["applied", undefined, undefined], ["applied", undefined, undefined],
    ]);
    expect(await syncState("tasks", task)).toBeUndefined();
    expect(await syncState("tasks", inNewList)).toBeUndefined();
  });
});

describe("POST /v1/sync/batch: a delete of a record the batch created, which the table's DELETE policy refuses", () => {
  let probe: ProbeStack;
  beforeAll(async () => {
    // Editors add entries and never delete them (no DELETE policy).
    probe = await startProbeStack("never_stored", [
      `create table public.tidesync_test_entries (id uuid primary key, list_id uuid not null references public.lists (id) on delete cascade, body text)`,
      ...syncedLikeTasks("tidesync_test_entries", ["body"]).filter((s) => !s.includes("can delete")),
    ]);
  }, 120_000);
  afterAll(async () => {
    await probe?.stop();
  });

  it("[create an entry, delete it]: the create applied and kept, the delete FORBIDDEN, as in two batches", async () => {
    const user = await probe.newUser();
    const pushOps = async (ops: unknown[]) => {
      const response = await call("/v1/sync/batch", { method: "POST", token: user.token, body: { ops }, baseUrl: probe.apiUrl });
      expect(response.status, response.text).toBe(200);
      return response.body.results as SyncOpResult[];
    };
    const apart = randomUUID();
    const created = await pushOps([upsert("tidesync_test_entries", apart, { list_id: user.userId, body: "x" })]);
    const deleted = await pushOps([remove("tidesync_test_entries", apart, created[0].record!.version)]);
    expect([...created, ...deleted].map(brief)).toEqual([["applied", undefined, apart], ["rejected", "FORBIDDEN", apart]]);

    const id = randomUUID();
    // (Before: both applied, without a record, and nothing stored.)
    const results = await pushOps([upsert("tidesync_test_entries", id, { list_id: user.userId, body: "x" }), remove("tidesync_test_entries", id, null)]);
    expect(results.map(brief)).toEqual([["applied", undefined, id], ["rejected", "FORBIDDEN", id]]);
    expect(results[1].error).toEqual(deleted[0].error);
    expect(results[0].record).toEqual(results[1].record);
    const [row] = await probe.admin`select count(*)::int as c from public.tidesync_test_entries where id = ${id}`;
    expect(row.c).toBe(1);
  }, 60_000);
});

// GET /v1/sync/records/{collection}/{id}: one synced record, read through the
// real function as the caller (RLS decides), in exactly the shape a pull lists
// it. Every member of the record's list reads it whatever their role; anyone
// else gets the 404 an unknown id gets; a record deleted within the tombstone
// horizon answers its tombstone (deleted: true, data: null), as an incremental
// pull lists it; a malformed request is refused before the caller's budget.
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { syncRecordSchema } from "../../functions/_shared/schemas/sync.ts";
import { adminSql, call, createTestUser, expectEnvelope, type TestUser } from "../support/harness.ts";
import { pullAll, pushOk, remove, removeMember, share, upsert } from "../support/shared-lists.ts";

const recordUrl = (collection: string, id: string) => `/v1/sync/records/${collection}/${id}`;

async function readRecord(user: TestUser, collection: string, id: string) {
  const response = await call(recordUrl(collection, id), { token: user.token });
  expect(response.status, response.text).toBe(200);
  expect(response.headers.get("content-type")).toMatch(/^application\/json/);
  expect(response.headers.get("cache-control")).toBe("no-store");
  expect(response.headers.get("ratelimit-policy")).toBeTruthy();
  return syncRecordSchema.strict().parse(response.body);
}

/** What a pull lists of the record now (full sync, or incremental after `cursor`), or undefined. */
async function pulled(user: TestUser, collection: string, id: string, cursor?: string) {
  return (await pullAll(user, cursor)).changes.find((change) => change.collection === collection && change.id === id);
}

/** Alice's list shared with Bob in `role`, holding one task of Alice's. */
async function sharedTask(role: "owner" | "editor" | "viewer") {
  const [alice, bob] = [await createTestUser(), await createTestUser()];
  const [list, task] = [randomUUID(), randomUUID()];
  await pushOk(alice, { ops: [upsert("lists", list, { title: "Shared" })] });
  await share(alice, list, bob, role);
  await pushOk(alice, { ops: [upsert("tasks", task, { list_id: list, title: "Milk", notes: "2 litres", done: false, position: 3 })] });
  return { alice, bob, list, task };
}

describe("GET /v1/sync/records/{collection}/{id}", () => {
  for (const role of ["owner", "editor", "viewer"] as const) {
    it(`answers a member (${role}) the record exactly as a pull lists it`, async () => {
      const { alice, bob, list, task } = await sharedTask(role);
      const record = await readRecord(bob, "tasks", task);
      expect(record).toMatchObject({ collection: "tasks", id: task, deleted: false, data: { list_id: list, title: "Milk", notes: "2 litres", done: false, position: 3 } });
      expect(record).toEqual(await pulled(bob, "tasks", task));
      expect(await readRecord(alice, "tasks", task)).toEqual(record);
      // The list itself, and an id sent in upper case (answered lower-cased, as everywhere).
      expect(await readRecord(bob, "lists", list.toUpperCase())).toEqual(await pulled(bob, "lists", list));
    });
  }

  it("answers 404 NOT_FOUND alike for a record the caller cannot see and for an unknown id", async () => {
    const { task, alice, bob, list } = await sharedTask("editor");
    const carol = await createTestUser();
    const hidden = expectEnvelope(await call(recordUrl("tasks", task), { token: carol.token }), 404, "NOT_FOUND");
    const unknown = expectEnvelope(await call(recordUrl("tasks", randomUUID()), { token: carol.token }), 404, "NOT_FOUND");
    expect({ ...hidden, request_id: "" }).toEqual({ ...unknown, request_id: "" });
    // Its detail tells it from an unknown route's 404 (a server from before the route), nothing more.
    expect(hidden.details).toEqual([{ field: "/id", code: "not_found", message: expect.any(String) }]);
    expect(expectEnvelope(await call(`/v1/sync/recordz/tasks/${task}`, { token: carol.token }), 404, "NOT_FOUND").details).toBeUndefined();
    // A member removed from the list no longer sees its records.
    await removeMember(alice, list, bob);
    expectEnvelope(await call(recordUrl("tasks", task), { token: bob.token }), 404, "NOT_FOUND");
  });

  it("answers a record deleted within the tombstone horizon as its tombstone, as an incremental pull lists it", async () => {
    const { alice, bob, task } = await sharedTask("viewer");
    const before = await readRecord(bob, "tasks", task);
    const { cursor } = await pullAll(bob);
    await pushOk(alice, { ops: [remove("tasks", task, before.version)] });
    const tombstone = await readRecord(bob, "tasks", task);
    expect(tombstone).toMatchObject({ collection: "tasks", id: task, deleted: true, data: null });
    expect(tombstone.version).toBeGreaterThan(before.version);
    expect(tombstone).toEqual(await pulled(bob, "tasks", task, cursor));
    // Once the retention purge has removed the tombstone, nothing is left to answer.
    await adminSql`delete from app_private.sync_records where collection = 'tasks' and id = ${task}`;
    expectEnvelope(await call(recordUrl("tasks", task), { token: bob.token }), 404, "NOT_FOUND");
  });

  it("refuses an unknown collection, a malformed id and an unknown parameter with 400 VALIDATION_FAILED, spending none of the budget", async () => {
    const alice = await createTestUser();
    const cases = [
      [recordUrl("tidesync_test_unsynced", alice.userId), "/collection", "unknown_collection"],
      [recordUrl("tasks", "not-a-uuid"), "/id", "invalid_format"],
      [`${recordUrl("tasks", alice.userId)}?limit=1`, "/limit", "unexpected_field"],
    ] as const;
    for (const [url, field, code] of cases) {
      const response = await call(url, { token: alice.token });
      const error = expectEnvelope(response, 400, "VALIDATION_FAILED");
      expect(error.details?.map((d) => [d.field, d.code]), url).toEqual([[field, code]]);
      expect(response.headers.get("ratelimit-remaining"), url).toBeNull();
    }
  });

  it("needs a token: 401 UNAUTHENTICATED without one; HEAD is 405 before the token is read, spending nothing", async () => {
    const { alice, task } = await sharedTask("owner");
    expectEnvelope(await call(recordUrl("tasks", task)), 401, "UNAUTHENTICATED");
    const head = await call(recordUrl("tasks", task), { method: "HEAD", token: alice.token });
    expect([head.status, head.headers.get("allow"), head.headers.get("ratelimit-remaining")]).toEqual([405, expect.stringContaining("GET"), null]);
  });
});

// POST /v1/sync/batch through real Deno and Postgres: exactly-once per op_id,
// per-op outcomes, field-level merge, limits, and isolation between users.
import { randomUUID } from "node:crypto";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recordDataBytes } from "../../functions/_shared/record-size.ts";
import { syncBatchResponseSchema } from "../../functions/_shared/schemas/sync.ts";
import { loadSampleTodo } from "../../scripts/seed/sample-todo.ts";
import { loadSampleUsers } from "../../scripts/seed/sample-users.ts";
import { adminSql, type ApiResponse, call, createTestUser, expectEnvelope, stack, type TestUser } from "../support/harness.ts";
import { type FunctionsServer, startFunctionsServer } from "../support/functions-server.ts";
import { signEs256, supabaseClaims } from "../support/tokens.ts";

interface Op {
  op_id: string;
  collection: string;
  record_id: string;
  type: "upsert" | "delete";
  base_version: number | null;
  data?: Record<string, unknown>;
  [extra: string]: unknown;
}

function upsert(collection: string, recordId: string, data: Record<string, unknown>, baseVersion: number | null = null): Op {
  return { op_id: randomUUID(), collection, record_id: recordId, type: "upsert", base_version: baseVersion, data };
}

function remove(collection: string, recordId: string, baseVersion: number | null): Op {
  return { op_id: randomUUID(), collection, record_id: recordId, type: "delete", base_version: baseVersion };
}

async function push(user: TestUser | string, body: unknown, baseUrl?: string): Promise<ApiResponse> {
  const token = typeof user === "string" ? user : user.token;
  return await call("/v1/sync/batch", { method: "POST", token, body, baseUrl });
}

/** Pushes and asserts a 200 whose body matches the shared response schema. */
async function pushOk(user: TestUser | string, body: unknown, baseUrl?: string) {
  const response = await push(user, body, baseUrl);
  expect(response.status, response.text).toBe(200);
  return syncBatchResponseSchema.parse(response.body);
}

async function storedRecord(userId: string, collection: string, id: string) {
  const [row] = await adminSql<{ version: string; deleted: boolean; data: Record<string, unknown> | null }[]>`
    select version::text, deleted, data from app_private.records
    where user_id = ${userId} and collection = ${collection} and id = ${id}`;
  return row ? { ...row, version: Number(row.version) } : undefined;
}

async function ledger(userId: string) {
  return await adminSql<{ op_id: string; status: string; version: string | null; result: Record<string, unknown> }[]>`
    select op_id::text, status, version::text, result from app_private.sync_ops where user_id = ${userId}`;
}

describe("POST /v1/sync/batch: outcomes", () => {
  it("applies ops in order and returns the server state with server-issued versions", async () => {
    const user = await createTestUser();
    const list = randomUUID();
    const task = randomUUID();
    const body = await pushOk(user, {
      device_id: randomUUID(),
      ops: [
        upsert("lists", list, { title: "Groceries", position: 1 }),
        upsert("tasks", task, { title: "Milk", done: false, list_id: list, due_date: "2026-12-01" }),
      ],
    });
    expect(body.results.map((r) => r.status)).toEqual(["applied", "applied"]);
    const [first, second] = body.results.map((r) => r.record!);
    expect(first).toMatchObject({ collection: "lists", id: list, deleted: false, data: { title: "Groceries", position: 1 } });
    expect(second.version).toBeGreaterThan(first.version);
    expect(await storedRecord(user.userId, "tasks", task)).toEqual({
      version: second.version,
      deleted: false,
      data: { title: "Milk", done: false, list_id: list, due_date: "2026-12-01" },
    });
  });

  it("chains ops on one record inside a batch: create, update, delete", async () => {
    const user = await createTestUser();
    const id = randomUUID();
    const body = await pushOk(user, {
      ops: [upsert("tasks", id, { title: "a" }), upsert("tasks", id, { done: true }, null), remove("tasks", id, null)],
    });
    expect(body.results.map((r) => r.status)).toEqual(["applied", "applied", "applied"]);
    expect(body.results[1].record!.data).toEqual({ title: "a", done: true });
    expect(body.results[2].record).toMatchObject({ deleted: true, data: null });
    const versions = body.results.map((r) => r.record!.version);
    expect([...versions].sort((a, b) => a - b)).toEqual(versions);
    expect(new Set(versions).size).toBe(3);
    expect(await storedRecord(user.userId, "tasks", id)).toEqual({ version: versions[2], deleted: true, data: null });
  });

  it("one invalid op leaves the others applied, with per-op errors and field pointers", async () => {
    const user = await createTestUser();
    const ok1 = upsert("tasks", randomUUID(), { title: "fine" });
    const unknownCollection = upsert("notes", randomUUID(), { title: "x" });
    const tooLong = upsert("tasks", randomUUID(), { title: "x".repeat(201) });
    const unknownField = upsert("lists", randomUUID(), { title: "ok", owner: "me" });
    const deleteWithData = { ...remove("tasks", randomUUID(), null), data: { title: "x" } };
    const ok2 = upsert("lists", randomUUID(), { title: "also fine" });
    const body = await pushOk(user, { ops: [ok1, unknownCollection, tooLong, unknownField, deleteWithData, ok2] });
    expect(body.results.map((r) => r.status)).toEqual(["applied", "rejected", "rejected", "rejected", "rejected", "applied"]);
    expect(body.results.map((r) => r.op_id)).toEqual([ok1, unknownCollection, tooLong, unknownField, deleteWithData, ok2].map((o) => o.op_id));
    expect(body.results[1].error).toMatchObject({ code: "VALIDATION_FAILED", details: [{ field: "/ops/1/collection", code: "unknown_collection" }] });
    expect(body.results[2].error).toMatchObject({ code: "VALIDATION_FAILED", details: [{ field: "/ops/2/data/title", code: "too_long" }] });
    expect(body.results[3].error).toMatchObject({ code: "VALIDATION_FAILED", details: [{ field: "/ops/3/data/owner", code: "unexpected_field" }] });
    expect(body.results[4].error).toMatchObject({ code: "VALIDATION_FAILED", details: [{ field: "/ops/4/data", code: "unexpected_field" }] });
    expect(body.results[1].record).toBeUndefined();
    expect(await storedRecord(user.userId, "tasks", ok1.record_id)).toMatchObject({ data: { title: "fine" } });
    expect(await storedRecord(user.userId, "lists", ok2.record_id)).toMatchObject({ data: { title: "also fine" } });
    expect(await storedRecord(user.userId, "tasks", tooLong.record_id)).toBeUndefined();
    const statuses = Object.fromEntries((await ledger(user.userId)).map((row) => [row.op_id, row.status]));
    expect(statuses[unknownCollection.op_id]).toBe("rejected");
    expect(statuses[ok2.op_id]).toBe("applied");
  });
  it("strings Postgres cannot store and prototype keys are rejected per op, not a failed batch", async () => {
    const user = await createTestUser();
    const nul = upsert("tasks", randomUUID(), { title: "a\u0000b" });
    const surrogate = upsert("tasks", randomUUID(), { notes: "x\uD800y" });
    const proto = upsert("tasks", randomUUID(), {});
    const ok = upsert("tasks", randomUUID(), { title: "fine" });
    const raw = JSON.stringify({ ops: [nul, surrogate, proto, ok] }).replace('"data":{}', '"data":{"__proto__":{"title":"x"}}');
    const response = await call("/v1/sync/batch", { method: "POST", token: user.token, rawBody: raw, headers: { "content-type": "application/json" } });
    expect(response.status, response.text).toBe(200);
    const body = syncBatchResponseSchema.parse(response.body);
    expect(body.results.map((r) => r.status)).toEqual(["rejected", "rejected", "rejected", "applied"]);
    expect(body.results[0].error!.details).toEqual([expect.objectContaining({ field: "/ops/0/data/title", code: "invalid_characters" })]);
    expect(body.results[1].error!.details).toEqual([expect.objectContaining({ field: "/ops/1/data/notes", code: "invalid_characters" })]);
    expect(body.results[2].error!.details).toEqual([expect.objectContaining({ field: "/ops/2/data/__proto__", code: "unexpected_field" })]);
  });
});

describe("POST /v1/sync/batch: exactly once per op_id", () => {
  it("a batch replayed many times applies each op once and answers duplicate with the original outcome", async () => {
    const user = await createTestUser();
    const id = randomUUID();
    const batch = {
      device_id: randomUUID(),
      ops: [upsert("tasks", id, { title: "once" }), upsert("tasks", id, { notes: "n" }), upsert("bogus", randomUUID(), {})],
    };
    const first = await pushOk(user, batch);
    expect(first.results.map((r) => r.status)).toEqual(["applied", "applied", "rejected"]);
    // A later write, so that "the original outcome" differs from the current state.
    const later = await pushOk(user, { ops: [upsert("tasks", id, { done: true }, first.results[1].record!.version)] });
    for (let i = 0; i < 4; i++) {
      const replay = await pushOk(user, batch);
      expect(replay.results.map((r) => r.status)).toEqual(["duplicate", "duplicate", "duplicate"]);
      expect(replay.results.map((r) => r.original_status)).toEqual(["applied", "applied", "rejected"]);
      expect(replay.results[0].record).toEqual(first.results[0].record);
      expect(replay.results[1].record).toEqual(first.results[1].record);
      expect(replay.results[2].error).toEqual(first.results[2].error);
    }
    const rows = await ledger(user.userId);
    expect(rows).toHaveLength(4);
    expect(await storedRecord(user.userId, "tasks", id)).toMatchObject({ version: later.results[0].record!.version, data: { title: "once", notes: "n", done: true } });
  });

  it("the same batch sent twice concurrently applies each op exactly once", async () => {
    const user = await createTestUser();
    for (let round = 0; round < 5; round++) {
      const ids = [randomUUID(), randomUUID()];
      const batch = { ops: [upsert("tasks", ids[0], { title: `r${round}` }), upsert("lists", ids[1], { title: "l" }), remove("tasks", ids[0], null)] };
      const [a, b] = await Promise.all([pushOk(user, batch), pushOk(user, batch)]);
      for (let i = 0; i < batch.ops.length; i++) {
        const statuses = [a.results[i].status, b.results[i].status].sort();
        expect(statuses).toEqual(["applied", "duplicate"]);
        expect(a.results[i].record).toEqual(b.results[i].record);
      }
    }
    const rows = await ledger(user.userId);
    expect(rows).toHaveLength(15);
    expect(rows.every((row) => row.status === "applied")).toBe(true);
    const [head] = await adminSql<{ last_seq: string; live_records: number }[]>`
      select last_seq::text, live_records from app_private.sync_heads where user_id = ${user.userId}`;
    expect(Number(head.last_seq)).toBe(15);
    expect(head.live_records).toBe(5);
  });

  it("a failed batch commits nothing: its op_ids stay unprocessed and a retry applies them", async () => {
    const user = await createTestUser();
    const ok = upsert("tasks", randomUUID(), { title: "kept for the retry" });
    // Simulates a crash mid-batch: the database refuses the ledger insert.
    await adminSql.unsafe(`
      create or replace function app_private.test_fail_ledger() returns trigger language plpgsql set search_path = '' as $$
      begin
        if new.user_id = '${user.userId}'::uuid then
          raise exception 'simulated crash';
        end if;
        return new;
      end $$;
      create trigger test_fail_ledger before insert on app_private.sync_ops for each row execute function app_private.test_fail_ledger();`);
    let failed: ApiResponse;
    try {
      failed = await push(user, { ops: [ok] });
    } finally {
      await adminSql.unsafe(`drop trigger test_fail_ledger on app_private.sync_ops; drop function app_private.test_fail_ledger();`);
    }
    expect(failed.status).toBe(500);
    expect(await storedRecord(user.userId, "tasks", ok.record_id)).toBeUndefined();
    expect(await ledger(user.userId)).toHaveLength(0);
    const retry = await pushOk(user, { ops: [ok] });
    expect(retry.results[0].status).toBe("applied");
  });
});

describe("POST /v1/sync/batch: field-level merge", () => {
  async function twoDevices() {
    const user = await createTestUser();
    const phone = randomUUID();
    const laptop = randomUUID();
    const id = randomUUID();
    const created = await pushOk(user, { device_id: phone, ops: [upsert("tasks", id, { title: "t", notes: "n", done: false })] });
    return { user, phone, laptop, id, base: created.results[0].record!.version };
  }

  it("two devices changing different fields both survive", async () => {
    const { user, phone, laptop, id, base } = await twoDevices();
    const a = await pushOk(user, { device_id: phone, ops: [upsert("tasks", id, { title: "phone title" }, base)] });
    const b = await pushOk(user, { device_id: laptop, ops: [upsert("tasks", id, { done: true }, base)] });
    expect(a.results[0].status).toBe("applied");
    expect(b.results[0].status).toBe("applied");
    expect(b.results[0].record!.data).toEqual({ title: "phone title", notes: "n", done: true });
    expect(await storedRecord(user.userId, "tasks", id)).toMatchObject({ data: { title: "phone title", notes: "n", done: true } });
  });

  it("the same field from another device → the later op gets conflict with the server record, nothing applied", async () => {
    const { user, phone, laptop, id, base } = await twoDevices();
    const a = await pushOk(user, { device_id: phone, ops: [upsert("tasks", id, { title: "phone" }, base)] });
    const b = await pushOk(user, { device_id: laptop, ops: [upsert("tasks", id, { title: "laptop", done: true }, base)] });
    expect(b.results[0].status).toBe("conflict");
    expect(b.results[0].record).toEqual(a.results[0].record);
    expect(await storedRecord(user.userId, "tasks", id)).toMatchObject({ version: a.results[0].record!.version, data: { title: "phone", done: false } });
    // Rebased on the returned record, the same change applies.
    const rebased = await pushOk(user, { device_id: laptop, ops: [upsert("tasks", id, { title: "laptop", done: true }, b.results[0].record!.version)] });
    expect(rebased.results[0].status).toBe("applied");
  });

  it("the same device's ops never conflict with its own earlier writes", async () => {
    const { user, phone, id, base } = await twoDevices();
    const a = await pushOk(user, { device_id: phone, ops: [upsert("tasks", id, { title: "1" }, base)] });
    const b = await pushOk(user, { device_id: phone, ops: [upsert("tasks", id, { title: "2" }, base)] });
    expect([a.results[0].status, b.results[0].status]).toEqual(["applied", "applied"]);
  });

  it("update after a concurrent delete → conflict with the tombstone", async () => {
    const { user, phone, laptop, id, base } = await twoDevices();
    const del = await pushOk(user, { device_id: laptop, ops: [remove("tasks", id, base)] });
    expect(del.results[0].status).toBe("applied");
    const upd = await pushOk(user, { device_id: phone, ops: [upsert("tasks", id, { done: true }, base)] });
    expect(upd.results[0].status).toBe("conflict");
    expect(upd.results[0].record).toMatchObject({ id, deleted: true, data: null, version: del.results[0].record!.version });
    expect(await storedRecord(user.userId, "tasks", id)).toMatchObject({ deleted: true });
  });

  it("delete after a concurrent update → conflict with the updated record (nothing silently lost)", async () => {
    const { user, phone, laptop, id, base } = await twoDevices();
    const upd = await pushOk(user, { device_id: phone, ops: [upsert("tasks", id, { done: true }, base)] });
    const del = await pushOk(user, { device_id: laptop, ops: [remove("tasks", id, base)] });
    expect(del.results[0].status).toBe("conflict");
    expect(del.results[0].record).toEqual(upd.results[0].record);
    expect(await storedRecord(user.userId, "tasks", id)).toMatchObject({ deleted: false, data: { done: true } });
    const again = await pushOk(user, { device_id: laptop, ops: [remove("tasks", id, upd.results[0].record!.version)] });
    expect(again.results[0].status).toBe("applied");
  });
});

describe("POST /v1/sync/batch: server-owned values and the envelope", () => {
  it("server-owned fields in an op reject the batch; in data they reject the op; versions are the server's", async () => {
    const user = await createTestUser();
    const withVersion = { ...upsert("tasks", randomUUID(), { title: "x" }), version: 999, updated_at: "2000-01-01T00:00:00Z" };
    const error = expectEnvelope(await push(user, { ops: [withVersion] }), 400, "VALIDATION_FAILED");
    expect(error.details!.map((d) => [d.field, d.code])).toEqual(
      expect.arrayContaining([["/ops/0/version", "unexpected_field"], ["/ops/0/updated_at", "unexpected_field"]]),
    );
    const inData = upsert("tasks", randomUUID(), { title: "x", version: 999, user_id: randomUUID(), updated_at: "2000-01-01T00:00:00Z" });
    const body = await pushOk(user, { ops: [inData] });
    expect(body.results[0].status).toBe("rejected");
    expect(body.results[0].error!.details!.map((d) => d.field).sort()).toEqual(["/ops/0/data/updated_at", "/ops/0/data/user_id", "/ops/0/data/version"]);
    const fresh = await pushOk(user, { ops: [upsert("tasks", randomUUID(), { title: "x" }, 0)] });
    expect(fresh.results[0].record!.version).toBe(1);
    expect(Date.parse(fresh.results[0].record!.updated_at)).toBeGreaterThan(Date.now() - 60_000);
  });

  it("a base_version ahead of the server's version rejects the op", async () => {
    const user = await createTestUser();
    const id = randomUUID();
    await pushOk(user, { ops: [upsert("tasks", id, { title: "x" })] });
    const body = await pushOk(user, { ops: [upsert("tasks", id, { title: "y" }, 50)] });
    expect(body.results[0]).toMatchObject({ status: "rejected", error: { code: "VALIDATION_FAILED", details: [{ field: "/ops/0/base_version", code: "ahead_of_server" }] } });
  });

  it.each([
    ["no ops", { ops: [] }, "/ops"],
    ["a non-uuid op_id", { ops: [{ ...upsert("tasks", randomUUID(), {}), op_id: "op-1" }] }, "/ops/0/op_id"],
    ["a non-uuid record_id", { ops: [{ ...upsert("tasks", randomUUID(), {}), record_id: "7" }] }, "/ops/0/record_id"],
    ["an unknown type", { ops: [{ ...upsert("tasks", randomUUID(), {}), type: "patch" }] }, "/ops/0/type"],
    ["a negative base_version", { ops: [upsert("tasks", randomUUID(), {}, -1)] }, "/ops/0/base_version"],
    ["a missing base_version", { ops: [{ ...upsert("tasks", randomUUID(), {}), base_version: undefined }] }, "/ops/0/base_version"],
    ["data that is not an object", { ops: [{ ...upsert("tasks", randomUUID(), {}), data: [1] }] }, "/ops/0/data"],
    ["an unknown top-level field", { ops: [upsert("tasks", randomUUID(), {})], user_id: randomUUID() }, "/user_id"],
    ["a non-uuid device_id", { ops: [upsert("tasks", randomUUID(), {})], device_id: "phone" }, "/device_id"],
  ])("%s → 400 VALIDATION_FAILED for the whole batch", async (_name, body, field) => {
    const user = await createTestUser();
    const error = expectEnvelope(await push(user, body), 400, "VALIDATION_FAILED");
    expect(error.details!.map((d) => d.field)).toContain(field);
    expect(await ledger(user.userId)).toHaveLength(0);
  });

  it("the same op_id twice in one batch → 400, nothing applied", async () => {
    const user = await createTestUser();
    const op = upsert("tasks", randomUUID(), { title: "x" });
    const error = expectEnvelope(await push(user, { ops: [op, { ...op, record_id: randomUUID() }] }), 400, "VALIDATION_FAILED");
    expect(error.details).toEqual([{ field: "/ops/1/op_id", code: "duplicate", message: "appears twice in this batch" }]);
    expect(await storedRecord(user.userId, "tasks", op.record_id)).toBeUndefined();
  });

  it("needs a signed-in user, JSON, and POST", async () => {
    expectEnvelope(await call("/v1/sync/batch", { method: "POST", body: { ops: [] } }), 401, "UNAUTHENTICATED");
    const user = await createTestUser();
    expectEnvelope(await call("/v1/sync/batch", { method: "POST", token: user.token, rawBody: "{", headers: { "content-type": "application/json" } }), 400, "MALFORMED_JSON");
    expectEnvelope(await call("/v1/sync/batch", { method: "POST", token: user.token, rawBody: "a=1", headers: { "content-type": "text/plain" } }), 415, "UNSUPPORTED_MEDIA_TYPE");
  });
});

describe("POST /v1/sync/batch: other users", () => {
  it("another user's record id behaves exactly like an unknown id", async () => {
    const alice = await createTestUser();
    const bob = await createTestUser();
    const id = randomUUID();
    const mine = await pushOk(alice, { ops: [upsert("tasks", id, { title: "alice's secret", notes: "private" })] });
    const aliceRecord = mine.results[0].record!;
    // Bob writes with Alice's id (and even her version as base) and deletes
    // another of her ids: each acts on Bob's own records, as for unknown ids.
    const unknown = randomUUID();
    const [onTheirs, onUnknown] = await Promise.all([
      pushOk(bob, { ops: [upsert("tasks", id, { done: true }, aliceRecord.version)] }),
      pushOk(await createTestUser(), { ops: [upsert("tasks", unknown, { done: true }, aliceRecord.version)] }),
    ]);
    const shape = (r: typeof onTheirs) => ({ ...r.results[0], op_id: "-", record: { ...r.results[0].record!, id: "-", updated_at: "-" } });
    expect(shape(onTheirs)).toEqual(shape(onUnknown));
    expect(onTheirs.results[0].record!.data).toEqual({ done: true });
    expect(JSON.stringify(onTheirs)).not.toContain("alice's secret");
    const del = await pushOk(bob, { ops: [remove("tasks", id, aliceRecord.version)] });
    expect(del.results[0]).toMatchObject({ status: "applied", record: { deleted: true } });
    expect(await storedRecord(alice.userId, "tasks", id)).toEqual({ version: aliceRecord.version, deleted: false, data: { title: "alice's secret", notes: "private" } });
    expect(await storedRecord(bob.userId, "tasks", id)).toMatchObject({ deleted: true });
  });

  it("another user's op_id is not a duplicate of mine", async () => {
    const alice = await createTestUser();
    const bob = await createTestUser();
    const op = upsert("tasks", randomUUID(), { title: "same op id" });
    const a = await pushOk(alice, { ops: [op] });
    const b = await pushOk(bob, { ops: [op] });
    expect([a.results[0].status, b.results[0].status]).toEqual(["applied", "applied"]);
  });
});

describe("POST /v1/sync/batch: limits", () => {
  let small: FunctionsServer;
  beforeAll(async () => {
    small = await startFunctionsServer({
      ...stack.functionsEnv,
      TIDESYNC_MAX_OPS_PER_BATCH: "3",
      TIDESYNC_MAX_BODY_BYTES: "4096",
      TIDESYNC_MAX_RECORD_DATA_BYTES: "300",
      TIDESYNC_MAX_LIVE_RECORDS_PER_USER: "2",
    }, { name: "sync-batch-limits" });
  });
  afterAll(async () => {
    await small?.stop();
  });

  it("more ops than max_ops_per_batch → 413 PAYLOAD_TOO_LARGE, nothing applied", async () => {
    const user = await createTestUser();
    const ops = [1, 2, 3, 4].map(() => upsert("tasks", randomUUID(), { title: "x" }));
    expectEnvelope(await push(user, { ops }, small.apiUrl), 413, "PAYLOAD_TOO_LARGE");
    expect(await ledger(user.userId)).toHaveLength(0);
    expect((await pushOk(user, { ops: ops.slice(0, 3) }, small.apiUrl)).results).toHaveLength(3);
  });

  it("a body over max_body_bytes → 413 PAYLOAD_TOO_LARGE", async () => {
    const user = await createTestUser();
    const response = await push(user, { ops: [upsert("tasks", randomUUID(), { notes: "x".repeat(5000) })] }, small.apiUrl);
    expectEnvelope(response, 413, "PAYLOAD_TOO_LARGE");
  });

  it("a record whose data would exceed max_record_data_bytes → that op rejected PAYLOAD_TOO_LARGE", async () => {
    const user = await createTestUser();
    const id = randomUUID();
    const body = await pushOk(user, {
      ops: [
        upsert("tasks", id, { title: "t", notes: "x".repeat(200) }),
        // Each patch is small; the merged record is what counts.
        upsert("tasks", id, { title: "y".repeat(150) }),
        upsert("tasks", randomUUID(), { title: "ok" }),
      ],
    }, small.apiUrl);
    expect(body.results.map((r) => r.status)).toEqual(["applied", "rejected", "applied"]);
    expect(body.results[1].error).toMatchObject({ code: "PAYLOAD_TOO_LARGE", details: [{ field: "/ops/1/data", code: "too_large" }] });
    expect(await storedRecord(user.userId, "tasks", id)).toMatchObject({ data: { title: "t" } });
  });

  it("more live records than max_live_records_per_user → the op rejected QUOTA_EXCEEDED; a delete frees room", async () => {
    const user = await createTestUser();
    const [a, b, c] = [randomUUID(), randomUUID(), randomUUID()];
    const first = await pushOk(user, { ops: [upsert("tasks", a, { title: "a" }), upsert("lists", b, { title: "b" }), upsert("tasks", c, { title: "c" })] }, small.apiUrl);
    expect(first.results.map((r) => r.status)).toEqual(["applied", "applied", "rejected"]);
    expect(first.results[2].error!.code).toBe("QUOTA_EXCEEDED");
    // Updating a live record is not a new one; deleting one makes room.
    const second = await pushOk(user, {
      ops: [upsert("tasks", a, { done: true }, null), remove("lists", b, first.results[1].record!.version), upsert("tasks", c, { title: "c" })],
    }, small.apiUrl);
    expect(second.results.map((r) => r.status)).toEqual(["applied", "applied", "applied"]);
    const [head] = await adminSql<{ live_records: number }[]>`select live_records from app_private.sync_heads where user_id = ${user.userId}`;
    expect(head.live_records).toBe(2);
  });
});

describe("record data size", () => {
  // Postgres refuses NUL and unpaired surrogates in jsonb; the collections refuse them too.
  // JSON.stringify writes exactly those as \u0000 and \udXXX escapes.
  const storable = (value: unknown) => !/\\u0000|\\ud[89a-f][0-9a-f]{2}/i.test(JSON.stringify(value));
  const dataArb = fc.dictionary(fc.string({ unit: "binary", maxLength: 8 }), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 6 }).filter(storable);

  it("recordDataBytes equals Postgres' octet_length(data::text), which the records_data_size check uses", async () => {
    await fc.assert(fc.asyncProperty(dataArb, async (data) => {
      const [row] = await adminSql<{ bytes: number }[]>`select octet_length(${JSON.stringify(data)}::text::jsonb::text) as bytes`;
      expect(recordDataBytes(data)).toBe(row.bytes);
    }), { numRuns: 300 });
  });
});

describe("sample seed", () => {
  it("the seeded sample to-do records are consistent with their heads and merge like pushed ones", async () => {
    const fixture = await loadSampleTodo();
    const alice = (await loadSampleUsers()).users[0];
    const own = fixture.users.find((u) => u.user_id === alice.id)!;
    const [head] = await adminSql<{ last_seq: string; live_records: number; records: number; max_version: string }[]>`
      select h.last_seq::text, h.live_records, count(r.*)::int as records, max(r.version)::text as max_version
      from app_private.sync_heads h join app_private.records r on r.user_id = h.user_id and not r.deleted
      where h.user_id = ${alice.id} and r.updated_at < '2026-02-01'
      group by h.user_id, h.last_seq, h.live_records`;
    expect(head.records).toBe(own.records.length);
    expect(Number(head.max_version)).toBeLessThanOrEqual(Number(head.last_seq));
    // A stale op against a seeded record conflicts and changes nothing.
    const token = await signEs256(stack.keys.privateJwk, supabaseClaims({ userId: alice.id, sessionId: alice.session_id, email: alice.email }));
    const task = own.records.find((r) => r.collection === "tasks")!;
    const before = await storedRecord(alice.id, "tasks", task.id);
    const body = await pushOk(token, { device_id: randomUUID(), ops: [upsert("tasks", task.id, { title: "stale" }, 0)] });
    expect(body.results[0]).toMatchObject({ status: "conflict", record: { id: task.id, data: task.data } });
    expect(await storedRecord(alice.id, "tasks", task.id)).toEqual(before);
  });
});

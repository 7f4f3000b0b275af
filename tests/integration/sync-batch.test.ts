// POST /v1/sync/batch through real Deno and Postgres on the app's own tables
// (public.lists, public.tasks): exactly-once per op_id, per-op outcomes,
// field-level merge between devices, limits, ids of other users, and the
// hardening of issue 8 (point 9): what an attacker's batch can no longer do.
import { randomUUID } from "node:crypto";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { jsonbTextBytes, recordDataBytes } from "../../functions/_shared/record-size.ts";
import { fieldVersion } from "../../functions/_shared/merge.ts";
import { syncBatchResponseSchema } from "../../functions/_shared/schemas/sync.ts";
import { MAX_OP_ERROR_BYTES } from "../../functions/_shared/sync-ledger.generated.ts";
import { MAX_LIVE_RECORDS_PER_USER } from "../../functions/_shared/sync-quota.generated.ts";
import { loadSampleTodo } from "../../scripts/seed/sample-todo.ts";
import { loadSampleUsers } from "../../scripts/seed/sample-users.ts";
import { phone, startSession } from "../support/device-sessions.ts";
import { type FunctionsServer, startFunctionsServer } from "../support/functions-server.ts";
import { adminSql, type ApiResponse, call, createTestUser, expectEnvelope, stack, type TestUser } from "../support/harness.ts";
import { asUser, membershipIds, pullAll, push, pushOk, remove, settled, upsert } from "../support/shared-lists.ts";
import { bookkeepingRows, ledger, liveRecords, storedRow, syncState, withFailingLedger } from "../support/sync-records.ts";
import { signEs256, supabaseClaims } from "../support/tokens.ts";

const WIRE_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;

/** A task in the user's personal list (id = user id). */
const task = (user: TestUser, data: Record<string, unknown> = {}) => ({ list_id: user.userId, title: "t", ...data });

/** Sends `text` as the body as is (for JSON that JSON.stringify cannot write). */
async function pushRaw(user: TestUser, text: string): Promise<ApiResponse> {
  return await call("/v1/sync/batch", { method: "POST", token: user.token, rawBody: text, headers: { "content-type": "application/json" } });
}

/**
 * A user with `count` sessions, each bound to a registered device (POST /v1/auth/session):
 * `devices` their installation ids (a batch's device_id), `rows` their device rows' ids (what
 * the sync state stamps a field with).
 */
async function userWithDevices(count: number) {
  const user = await createTestUser();
  const devices: string[] = [];
  const rows: string[] = [];
  for (let i = 0; i < count; i++) {
    const token = i === 0 ? user.token : (await user.newSession()).token;
    const device = phone();
    const started = await startSession(token, device);
    devices.push(device.installation_id);
    rows.push(started.body.device.id);
  }
  return { user, devices, rows };
}

describe("POST /v1/sync/batch: outcomes", () => {
  it("applies ops in order (a list, then a task in it) and returns the rows as stored, with server-issued versions", async () => {
    const user = await createTestUser();
    const list = randomUUID();
    const id = randomUUID();
    const body = await pushOk(user, {
      ops: [
        upsert("lists", list, { title: "Groceries", position: 1 }),
        upsert("tasks", id, { title: "Milk", done: false, list_id: list, due_date: "2026-12-01" }),
      ],
    });
    expect(body.results.map((r) => r.status)).toEqual(["applied", "applied"]);
    const [first, second] = body.results.map((r) => r.record!);
    expect(first).toMatchObject({ collection: "lists", id: list, deleted: false, data: { title: "Groceries", position: 1, archived: false, color: null, created_by: user.userId } });
    expect(second).toMatchObject({ collection: "tasks", id, deleted: false, data: { title: "Milk", done: false, list_id: list, due_date: "2026-12-01", notes: null } });
    expect(second.version).toBeGreaterThan(first.version);
    expect(await storedRow("tasks", id)).toEqual(second.data);
    expect(await syncState("tasks", id)).toMatchObject({ version: second.version, deleted: false, scope_id: list });
  });

  it("a batch of many records returns each one as stored, the same record a pull lists", async () => {
    const user = await createTestUser();
    // More records than the read-back joins into one row (50).
    const ids = Array.from({ length: 130 }, () => randomUUID());
    const body = await pushOk(user, { ops: ids.map((id, i) => upsert("tasks", id, task(user, { title: `task ${i}`, position: i }))) });
    expect(body.results.map((r) => [r.status, r.record?.id, r.record?.data?.title])).toEqual(ids.map((id, i) => ["applied", id, `task ${i}`]));
    const pulled = new Map((await pullAll(user)).changes.map((ch) => [ch.id, ch]));
    for (const result of body.results) expect(result.record).toEqual(pulled.get(result.record!.id));
  });

  it("several ops on one record in a batch: the record is written once, every applied op returns its final state", async () => {
    const user = await createTestUser();
    const id = randomUUID();
    const created = await pushOk(user, { ops: [upsert("tasks", id, task(user, { title: "a" })), upsert("tasks", id, { done: true }), upsert("tasks", id, { notes: "n" })] });
    expect(created.results.map((r) => r.status)).toEqual(["applied", "applied", "applied"]);
    const final = created.results[2].record!;
    expect(final.data).toMatchObject({ title: "a", done: true, notes: "n" });
    expect(created.results.map((r) => r.record)).toEqual([final, final, final]);
    expect(await syncState("tasks", id)).toMatchObject({ version: final.version, deleted: false });

    const gone = await pushOk(user, { ops: [upsert("tasks", id, { title: "b" }, final.version), remove("tasks", id, final.version)] });
    expect(gone.results.map((r) => r.status)).toEqual(["applied", "applied"]);
    const tombstone = gone.results[1].record!;
    expect(tombstone).toMatchObject({ id, deleted: true, data: null });
    expect(tombstone.version).toBeGreaterThan(final.version);
    expect(gone.results[0].record).toEqual(tombstone);
    expect(await storedRow("tasks", id)).toBeUndefined();
    expect(await syncState("tasks", id)).toMatchObject({ version: tombstone.version, deleted: true });
  });

  it("a task deleted and re-created in one batch is what two batches make: a new row from the patch, the table's defaults for the rest", async () => {
    // One device: its re-create does not conflict with its own delete, in one batch or two.
    const { user, devices: [device_id] } = await userWithDevices(1);
    const [together, apart] = [randomUUID(), randomUUID()];
    const old = task(user, { title: "old", notes: "secret notes", done: true, position: 5 });
    const created = await pushOk(user, { device_id, ops: [upsert("tasks", together, old), upsert("tasks", apart, old)] });
    const [oldTogether, oldApart] = created.results.map((r) => r.record!);
    const before = await pullAll(user);

    await pushOk(user, { device_id, ops: [remove("tasks", apart, oldApart.version)] });
    const twoBatches = await pushOk(user, { device_id, ops: [upsert("tasks", apart, task(user, { title: "fresh" }))] });
    expect(twoBatches.results[0].status).toBe("applied");
    const oneBatch = await pushOk(user, { device_id, ops: [remove("tasks", together, oldTogether.version), upsert("tasks", together, task(user, { title: "fresh" }))] });
    expect(oneBatch.results.map((r) => r.status)).toEqual(["applied", "applied"]);

    const row = (await storedRow("tasks", together))!;
    expect(row).toMatchObject({ title: "fresh", notes: null, done: false, position: 0 });
    const withoutTimes = ({ created_at: _c, ...rest }: Record<string, unknown>) => rest;
    expect(withoutTimes(row)).toEqual(withoutTimes((await storedRow("tasks", apart))!));
    expect(withoutTimes(oneBatch.results[1].record!.data!)).toEqual(withoutTimes(twoBatches.results[0].record!.data!));
    // Every op of the record answers with it as stored; the ledger keeps the version it now has.
    const stored = oneBatch.results[1].record!;
    expect(stored.data).toEqual(row);
    expect(stored.data!.created_at).not.toBe(oldTogether.data!.created_at);
    expect(oneBatch.results[0].record).toEqual(stored);
    // Stamped as an insert (every column by the re-creating write), as in two batches.
    const state = (await syncState("tasks", together))!;
    expect(state).toMatchObject({ version: stored.version, deleted: false });
    expect(Object.keys(state.field_versions).sort()).toEqual(Object.keys((await syncState("tasks", apart))!.field_versions).sort());
    expect((await ledger(user.userId)).filter((r) => r.record_id === together && r.version === stored.version).map((r) => r.status)).toEqual(["applied", "applied"]);
    // Another device gets the new row, not the old one's columns.
    const next = await pullAll(user, before.cursor);
    expect(next.changes.find((c) => c.id === together)).toEqual(stored);
  });

  it("a record created and deleted in one batch, by its own delete or its list's, is answered without a record: the server never held one, and no pull lists it", async () => {
    const user = await createTestUser();
    const [list, inList, alone] = [randomUUID(), randomUUID(), randomUUID()];
    const made = await pushOk(user, { ops: [upsert("lists", list, { title: "L" })] });
    const start = await pullAll(user);
    const ops = [
      upsert("tasks", inList, { list_id: list, title: "t" }), upsert("tasks", inList, { title: "t2" }),
      remove("lists", list, made.results[0].record!.version),
      upsert("tasks", inList, { title: "after its list's delete" }),
      upsert("tasks", alone, task(user)), remove("tasks", alone, null),
    ];
    const body = await pushOk(user, { ops });
    expect(body.results.map((r) => [r.status, r.error?.code, r.record?.id])).toEqual([
      ["applied", undefined, undefined], ["applied", undefined, undefined], ["applied", undefined, list],
      ["rejected", "NOT_FOUND", undefined], ["applied", undefined, undefined], ["applied", undefined, undefined],
    ]);
    expect(body.results[3].error!.details).toEqual([expect.objectContaining({ field: "/ops/3/record_id", code: "not_found" })]);
    expect(await syncState("tasks", inList)).toBeUndefined();
    // A task created in a list the same batch deleted before it: its list is gone, as for a list deleted earlier.
    const [gone, late] = [randomUUID(), randomUUID()];
    const goneMade = await pushOk(user, { ops: [upsert("lists", gone, { title: "G" })] });
    const late1 = await pushOk(user, { ops: [remove("lists", gone, goneMade.results[0].record!.version), upsert("tasks", late, { list_id: gone, title: "t" })] });
    expect(late1.results.map((r) => [r.status, r.error?.code])).toEqual([["applied", undefined], ["rejected", "NOT_FOUND"]]);
    expect(late1.results[1].error!.details).toEqual([expect.objectContaining({ field: "/ops/1/data/list_id" })]);
    expect(await storedRow("tasks", late)).toBeUndefined();
    expect(await syncState("tasks", alone)).toBeUndefined();
    expect((await pullAll(user, start.cursor)).changes.filter((c) => c.collection === "tasks")).toEqual([]);
    // The ledger keeps no version for them, and a replay answers the same.
    expect((await ledger(user.userId)).filter((r) => r.record_id === inList || r.record_id === alone).map((r) => r.version)).toEqual([null, null, null, null, null]);
    const again = await pushOk(user, { ops });
    expect(again.results.map((r) => [r.status, r.original_status, r.original_version, r.record?.id])).toEqual([
      ["duplicate", "applied", undefined, undefined], ["duplicate", "applied", undefined, undefined], ["duplicate", "applied", expect.any(Number), undefined],
      ["duplicate", "rejected", undefined, undefined], ["duplicate", "applied", undefined, undefined], ["duplicate", "applied", undefined, undefined],
    ]);
  });

  it("one bad op never blocks the batch: per-op errors with field pointers, the others applied", async () => {
    const user = await createTestUser();
    const ok1 = upsert("tasks", randomUUID(), task(user, { title: "fine" }));
    const unknownCollection = upsert("tidesync_test_unsynced", randomUUID(), { title: "x" });
    const tooLong = upsert("tasks", randomUUID(), task(user, { title: "x".repeat(201) }));
    const unknownField = upsert("lists", randomUUID(), { title: "ok", owner: "me" });
    const deleteWithData = { ...remove("tasks", randomUUID(), null), data: { title: "x" } };
    const noList = upsert("tasks", randomUUID(), { title: "where?" });
    const unseenList = upsert("tasks", randomUUID(), { title: "x", list_id: randomUUID() });
    const badColor = upsert("lists", randomUUID(), { title: "x", color: "red" });
    const ok2 = upsert("lists", randomUUID(), { title: "also fine" });
    const ops = [ok1, unknownCollection, tooLong, unknownField, deleteWithData, noList, unseenList, badColor, ok2];
    const body = await pushOk(user, { ops });
    expect(body.results.map((r) => r.op_id)).toEqual(ops.map((o) => o.op_id));
    expect(body.results.map((r) => [r.status, r.error?.code])).toEqual([
      ["applied", undefined], ["rejected", "VALIDATION_FAILED"], ["rejected", "VALIDATION_FAILED"], ["rejected", "VALIDATION_FAILED"],
      ["rejected", "VALIDATION_FAILED"], ["rejected", "VALIDATION_FAILED"], ["rejected", "NOT_FOUND"], ["rejected", "VALIDATION_FAILED"],
      ["applied", undefined],
    ]);
    const pointers = body.results.map((r) => r.error?.details?.map((d) => [d.field, d.code]));
    expect(pointers.slice(1, 8)).toEqual([
      [["/ops/1/collection", "unknown_collection"]],
      [["/ops/2/data/title", "too_long"]],
      [["/ops/3/data/owner", "unexpected_field"]],
      [["/ops/4/data", "unexpected_field"]],
      [["/ops/5/data/list_id", "required"]],
      [["/ops/6/data/list_id", "not_found"]],
      [["/ops/7/data/color", "invalid_format"]],
    ]);
    expect(body.results[1].record).toBeUndefined();
    expect(await storedRow("tasks", ok1.record_id)).toMatchObject({ title: "fine" });
    expect(await storedRow("lists", ok2.record_id)).toMatchObject({ title: "also fine" });
    for (const rejected of [tooLong, noList, unseenList]) expect(await storedRow("tasks", rejected.record_id)).toBeUndefined();
    const statuses = Object.fromEntries((await ledger(user.userId)).map((row) => [row.op_id, row.status]));
    expect(statuses[unknownCollection.op_id]).toBe("rejected");
    expect(statuses[ok2.op_id]).toBe("applied");
  });

  it("strings Postgres cannot store and prototype keys in data are rejected per op, not a failed batch", async () => {
    const user = await createTestUser();
    const nul = upsert("tasks", randomUUID(), task(user, { title: "a\u0000b" }));
    const surrogate = upsert("tasks", randomUUID(), task(user, { notes: "x\uD800y" }));
    const proto = upsert("tasks", randomUUID(), {});
    const ok = upsert("tasks", randomUUID(), task(user, { title: "fine" }));
    const raw = JSON.stringify({ ops: [nul, surrogate, proto, ok] }).replace('"data":{}', '"data":{"__proto__":{"title":"x"}}');
    const response = await pushRaw(user, raw);
    expect(response.status, response.text).toBe(200);
    const body = syncBatchResponseSchema.parse(response.body);
    expect(body.results.map((r) => r.status)).toEqual(["rejected", "rejected", "rejected", "applied"]);
    expect(body.results[0].error!.details).toEqual([expect.objectContaining({ field: "/ops/0/data/title", code: "invalid_characters" })]);
    expect(body.results[1].error!.details).toEqual([expect.objectContaining({ field: "/ops/1/data/notes", code: "invalid_characters" })]);
    expect(body.results[2].error!.details).toContainEqual(expect.objectContaining({ field: "/ops/2/data/__proto__", code: "unexpected_field" }));
  });

  it("a scope id of 36 hex digits and dashes that is no uuid is that op's rejection, not a failed batch", async () => {
    const user = await createTestUser();
    const odd = ["-".repeat(36), "0".repeat(35) + "-", "a".repeat(36)];
    const bad = odd.map((listId) => upsert("tasks", randomUUID(), task(user, { list_id: listId })));
    const ok = upsert("tasks", randomUUID(), task(user, { title: "fine" }));
    const body = await pushOk(user, { ops: [...bad, ok] });
    expect(body.results.map((r) => r.status)).toEqual(["rejected", "rejected", "rejected", "applied"]);
    for (const [i, result] of body.results.slice(0, 3).entries()) {
      expect(result.error!.details).toEqual([expect.objectContaining({ field: `/ops/${i}/data/list_id`, code: "invalid_format" })]);
    }
  });
});

describe("POST /v1/sync/batch: exactly once per op_id", () => {
  it("a batch replayed many times applies each op once; duplicates carry the original status and error and the CURRENT record", async () => {
    const user = await createTestUser();
    const id = randomUUID();
    const batch = { ops: [upsert("tasks", id, task(user, { title: "once" })), upsert("tasks", id, { notes: "n" }), upsert("bogus", randomUUID(), {})] };
    const first = await pushOk(user, batch);
    expect(first.results.map((r) => r.status)).toEqual(["applied", "applied", "rejected"]);
    // A later write, so that the current record differs from the one the ops produced.
    const later = await pushOk(user, { ops: [upsert("tasks", id, { done: true }, first.results[1].record!.version)] });
    const current = later.results[0].record!;
    expect(current.version).toBeGreaterThan(first.results[1].record!.version);
    for (let i = 0; i < 4; i++) {
      const replay = await pushOk(user, batch);
      expect(replay.results.map((r) => r.status)).toEqual(["duplicate", "duplicate", "duplicate"]);
      expect(replay.results.map((r) => r.original_status)).toEqual(["applied", "applied", "rejected"]);
      // The version each op wrote then, for the ops a client queued behind it.
      expect(replay.results.map((r) => r.original_version)).toEqual([first.results[0].record!.version, first.results[1].record!.version, undefined]);
      expect(replay.results[0].record).toEqual(current);
      expect(replay.results[1].record).toEqual(current);
      expect(replay.results[2].error).toEqual(first.results[2].error);
      expect(replay.results[2].record).toBeUndefined();
    }
    expect(await ledger(user.userId)).toHaveLength(4);
    expect(await storedRow("tasks", id)).toMatchObject({ title: "once", notes: "n", done: true });
    expect((await syncState("tasks", id))!.version).toBe(current.version);
  });

  it("the same batch sent twice concurrently applies each op exactly once", async () => {
    const user = await createTestUser();
    for (let round = 0; round < 5; round++) {
      const [t, l] = [randomUUID(), randomUUID()];
      const batch = { ops: [upsert("tasks", t, task(user, { title: `r${round}` })), upsert("lists", l, { title: "l" }), upsert("tasks", t, { done: true })] };
      const [a, b] = await Promise.all([push(user, batch), push(user, batch)]);
      for (const response of [a, b]) expect(response.status, response.text).toBe(200);
      for (let i = 0; i < batch.ops.length; i++) {
        const statuses = [a.body.results[i].status, b.body.results[i].status].sort();
        expect(statuses).toEqual(["applied", "duplicate"]);
        expect(a.body.results[i].record).toEqual(b.body.results[i].record);
      }
    }
    const rows = await ledger(user.userId);
    expect(rows).toHaveLength(15);
    expect(rows.every((row) => row.status === "applied")).toBe(true);
    expect(await liveRecords(user.userId)).toBe(10);
  });

  it("a batch that fails mid-way commits nothing: its op_ids stay unprocessed and a retry applies them", async () => {
    const user = await createTestUser();
    const ok = upsert("tasks", randomUUID(), task(user, { title: "kept for the retry" }));
    const list = upsert("lists", randomUUID(), { title: "also kept" });
    // Simulates a crash after the rows were written: the database refuses the ledger insert.
    const failed: ApiResponse = await withFailingLedger(user.userId, () => push(user, { ops: [ok, list] }));
    expect(failed.status).toBe(500);
    expect(failed.body.error.retryable).toBe(true);
    expect(await storedRow("tasks", ok.record_id)).toBeUndefined();
    expect(await storedRow("lists", list.record_id)).toBeUndefined();
    expect(await bookkeepingRows(ok.record_id)).toEqual({ records: 0, changes: 0 });
    expect(await ledger(user.userId)).toHaveLength(0);
    expect(await liveRecords(user.userId)).toBe(0);
    const retry = await pushOk(user, { ops: [ok, list] });
    expect(retry.results.map((r) => r.status)).toEqual(["applied", "applied"]);
  });

  it("an op_id already used for another record is rejected op_id_reused, neither applied nor logged; for the same record it is still a duplicate", async () => {
    const user = await createTestUser();
    const [a, b] = [randomUUID(), randomUUID()];
    const first = upsert("tasks", a, task(user, { title: "a" }));
    const applied = await pushOk(user, { ops: [first] });
    const other = (await pushOk(user, { ops: [upsert("tasks", b, task(user, { title: "b" }))] })).results[0].record!;

    // The client's bug: first's op_id (in upper case) on an edit of b, then on a record of another collection with a's id.
    const reused = { ...upsert("tasks", b, { title: "changed" }, other.version), op_id: first.op_id.toUpperCase() };
    const elsewhere = { ...upsert("lists", a, { title: "x" }), op_id: first.op_id };
    for (const [op, record] of [[reused, other], [elsewhere, undefined]] as const) {
      const body = await pushOk(user, { ops: [upsert("tasks", randomUUID(), task(user)), op] });
      expect(body.results[0].status).toBe("applied");
      expect(body.results[1]).toEqual({
        op_id: first.op_id,
        status: "rejected",
        error: { code: "VALIDATION_FAILED", message: expect.any(String), details: [{ field: "/ops/1/op_id", code: "op_id_reused", message: expect.stringMatching(/another record/) }] },
        ...(record ? { record } : {}),
      });
    }
    expect(await storedRow("tasks", b)).toMatchObject({ title: "b" });
    expect(await storedRow("lists", a)).toBeUndefined();
    const rows = await ledger(user.userId);
    expect(rows.filter((r) => r.op_id === first.op_id)).toEqual([expect.objectContaining({ collection: "tasks", record_id: a, status: "applied" })]);
    expect(rows).toHaveLength(4);

    // The same record (its id in upper case too) is the op itself, sent again.
    const retry = await pushOk(user, { ops: [{ ...first, op_id: first.op_id.toUpperCase(), record_id: a.toUpperCase() }] });
    expect(retry.results[0]).toMatchObject({ op_id: first.op_id, status: "duplicate", original_status: "applied", original_version: applied.results[0].record!.version });
  });

  it("a duplicate's error points at the op where THIS request holds it (errors.md: pointers are relative to the request body)", async () => {
    const user = await createTestUser();
    const bad = upsert("tasks", randomUUID(), task(user, { title: "" }));
    const first = await pushOk(user, { ops: [bad] });
    expect(first.results[0].error!.details!.map((d) => [d.field, d.code])).toEqual([["/ops/0/data/title", "too_short"]]);
    const ok = () => upsert("tasks", randomUUID(), task(user, { title: "fine" }));
    const retry = await pushOk(user, { ops: [ok(), ok(), bad] });
    expect(retry.results[2]).toEqual({
      op_id: bad.op_id, status: "duplicate", original_status: "rejected",
      error: { ...first.results[0].error, details: [{ ...first.results[0].error!.details![0], field: "/ops/2/data/title" }] },
    });
    // The ledger keeps the first answer as it was.
    expect((await ledger(user.userId)).find((r) => r.op_id === bad.op_id)).toMatchObject({ error: first.results[0].error });
  });

  it("another user's op_id is not a duplicate of mine", async () => {
    const alice = await createTestUser();
    const bob = await createTestUser();
    const opId = randomUUID();
    const a = await pushOk(alice, { ops: [{ ...upsert("tasks", randomUUID(), task(alice)), op_id: opId }] });
    const b = await pushOk(bob, { ops: [{ ...upsert("tasks", randomUUID(), task(bob)), op_id: opId }] });
    expect([a.results[0].status, b.results[0].status]).toEqual(["applied", "applied"]);
  });
});

describe("POST /v1/sync/batch: field-level merge between devices", () => {
  async function twoDevices() {
    const { user, devices: [phoneId, laptopId], rows } = await userWithDevices(2);
    const id = randomUUID();
    const created = await pushOk(user, { device_id: phoneId, ops: [upsert("tasks", id, task(user, { title: "t", notes: "n", done: false }))] });
    return { user, phoneId, laptopId, rows, id, base: created.results[0].record!.version };
  }

  it("two devices changing different fields both survive", async () => {
    const { user, phoneId, laptopId, rows, id, base } = await twoDevices();
    const a = await pushOk(user, { device_id: phoneId, ops: [upsert("tasks", id, { title: "phone title" }, base)] });
    const b = await pushOk(user, { device_id: laptopId, ops: [upsert("tasks", id, { done: true }, base)] });
    expect([a.results[0].status, b.results[0].status]).toEqual(["applied", "applied"]);
    expect(b.results[0].record!.data).toMatchObject({ title: "phone title", notes: "n", done: true });
    expect(await storedRow("tasks", id)).toMatchObject({ title: "phone title", notes: "n", done: true });
    const state = await syncState("tasks", id);
    // Each field stamped with its device's row (one per user and installation).
    expect([fieldVersion(state!.field_versions, "title")!.d, fieldVersion(state!.field_versions, "done")!.d]).toEqual(rows);
  });

  it("the same field from another device → conflict with the server record, nothing applied; rebased, it applies", async () => {
    const { user, phoneId, laptopId, id, base } = await twoDevices();
    const a = await pushOk(user, { device_id: phoneId, ops: [upsert("tasks", id, { title: "phone" }, base)] });
    const b = await pushOk(user, { device_id: laptopId, ops: [upsert("tasks", id, { title: "laptop", done: true }, base)] });
    expect(b.results[0].status).toBe("conflict");
    expect(b.results[0].record).toEqual(a.results[0].record);
    // Only the clashing field is named: `done` did not clash (it would have merged alone).
    expect(b.results[0].conflicting_fields).toEqual(["title"]);
    expect(await storedRow("tasks", id)).toMatchObject({ title: "phone", done: false });
    expect((await syncState("tasks", id))!.version).toBe(a.results[0].record!.version);
    const rebased = await pushOk(user, { device_id: laptopId, ops: [upsert("tasks", id, { title: "laptop", done: true }, b.results[0].record!.version)] });
    expect(rebased.results[0].status).toBe("applied");
  });

  it("the same device's ops never conflict with its own earlier writes", async () => {
    const { user, phoneId, id, base } = await twoDevices();
    const a = await pushOk(user, { device_id: phoneId, ops: [upsert("tasks", id, { title: "1" }, base)] });
    const b = await pushOk(user, { device_id: phoneId, ops: [upsert("tasks", id, { title: "2" }, base)] });
    expect([a.results[0].status, b.results[0].status]).toEqual(["applied", "applied"]);
  });

  it("an update after another device's delete → conflict with the tombstone", async () => {
    const { user, phoneId, laptopId, id, base } = await twoDevices();
    const del = await pushOk(user, { device_id: laptopId, ops: [remove("tasks", id, base)] });
    expect(del.results[0].status).toBe("applied");
    const upd = await pushOk(user, { device_id: phoneId, ops: [upsert("tasks", id, { done: true }, base)] });
    expect(upd.results[0]).toMatchObject({ status: "conflict", record: { id, deleted: true, data: null, version: del.results[0].record!.version } });
    expect(upd.results[0].conflicting_fields).toEqual(["*"]);
    expect(await storedRow("tasks", id)).toBeUndefined();
  });

  it("a delete after another device's update → conflict with the updated record (nothing silently lost)", async () => {
    const { user, phoneId, laptopId, id, base } = await twoDevices();
    const upd = await pushOk(user, { device_id: phoneId, ops: [upsert("tasks", id, { done: true }, base)] });
    const del = await pushOk(user, { device_id: laptopId, ops: [remove("tasks", id, base)] });
    expect(del.results[0].status).toBe("conflict");
    expect(del.results[0].record).toEqual(upd.results[0].record);
    expect(del.results[0].conflicting_fields).toEqual(["done"]);
    expect(await storedRow("tasks", id)).toMatchObject({ done: true });
    const again = await pushOk(user, { device_id: laptopId, ops: [remove("tasks", id, upd.results[0].record!.version)] });
    expect(again.results[0].status).toBe("applied");
  });
});

describe("POST /v1/sync/batch: server-owned values and the envelope", () => {
  it("server-owned fields beside an op or in its data reject that op", async () => {
    const user = await createTestUser();
    const withVersion = { ...upsert("tasks", randomUUID(), task(user)), version: 999, updated_at: "2000-01-01T00:00:00Z" };
    const inData = upsert("tasks", randomUUID(), task(user, { version: 999, created_by: randomUUID(), created_at: "2000-01-01T00:00:00Z" }));
    const body = await pushOk(user, { ops: [withVersion, inData] });
    expect(body.results.map((r) => r.status)).toEqual(["rejected", "rejected"]);
    expect(body.results[0].error!.details!.map((d) => [d.field, d.code]).sort()).toEqual([
      ["/ops/0/updated_at", "unexpected_field"], ["/ops/0/version", "unexpected_field"],
    ]);
    expect(body.results[1].error!.details!.map((d) => [d.field, d.code]).sort()).toEqual([
      ["/ops/1/data/created_at", "read_only"], ["/ops/1/data/created_by", "read_only"], ["/ops/1/data/version", "unexpected_field"],
    ]);
    expect(await storedRow("tasks", withVersion.record_id)).toBeUndefined();
    expect(await storedRow("tasks", inData.record_id)).toBeUndefined();
  });

  it("a base_version ahead of the server's version rejects the op", async () => {
    const user = await createTestUser();
    const id = randomUUID();
    const created = await pushOk(user, { ops: [upsert("tasks", id, task(user))] });
    const body = await pushOk(user, { ops: [upsert("tasks", id, { title: "y" }, created.results[0].record!.version + 1)] });
    expect(body.results[0]).toMatchObject({ status: "rejected", error: { code: "VALIDATION_FAILED", details: [{ field: "/ops/0/base_version", code: "ahead_of_server" }] } });
  });

  it.each([
    ["no ops", () => ({ ops: [] }), "/ops"],
    ["a non-uuid op_id", () => ({ ops: [upsert("tasks", randomUUID(), {}), { ...upsert("tasks", randomUUID(), {}), op_id: "op-1" }] }), "/ops/1/op_id"],
    ["a missing op_id", () => ({ ops: [upsert("tasks", randomUUID(), {}), { ...upsert("tasks", randomUUID(), {}), op_id: undefined }] }), "/ops/1/op_id"],
    ["an op that is not an object", () => ({ ops: [upsert("tasks", randomUUID(), {}), [1]] }), "/ops/1"],
    ["an unknown top-level field", () => ({ ops: [upsert("tasks", randomUUID(), {})], user_id: randomUUID() }), "/user_id"],
    ["a non-uuid device_id", () => ({ ops: [upsert("tasks", randomUUID(), {})], device_id: "phone" }), "/device_id"],
  ])("%s → 400 VALIDATION_FAILED for the whole batch", async (_name, body, field) => {
    const user = await createTestUser();
    const error = expectEnvelope(await push(user, body()), 400, "VALIDATION_FAILED");
    expect(error.details!.map((d) => d.field)).toContain(field);
    expect(await ledger(user.userId)).toHaveLength(0);
  });

  it.each([
    ["a collection of 65 characters", { collection: "x".repeat(65) }, [["/ops/1/collection", "too_long"]]],
    ["an empty collection", { collection: "" }, [["/ops/1/collection", "too_short"]]],
    ["a non-uuid record_id", { record_id: "abc" }, [["/ops/1/record_id", "invalid_format"]]],
    ["an unknown type", { type: "patch" }, [["/ops/1/type", "invalid_value"]]],
    ["a missing type", { type: undefined }, [["/ops/1/type", "required"]]],
    ["a negative base_version", { base_version: -1 }, [["/ops/1/base_version", "too_small"]]],
    ["a missing base_version", { base_version: undefined }, [["/ops/1/base_version", "required"]]],
    ["data that is not an object", { data: [1] }, [["/ops/1/data", "invalid_type"]]],
    ["an unexpected key and a bad record_id", { record_id: 7, extra: true }, [["/ops/1/extra", "unexpected_field"], ["/ops/1/record_id", "invalid_type"]]],
  ])("one op with %s is rejected on its own (api-v1.md: one bad op never blocks a batch), exactly once", async (_name, change, details) => {
    const user = await createTestUser();
    const good = upsert("tasks", randomUUID(), task(user, { title: "good" }));
    const bad: Record<string, unknown> = { ...upsert("tasks", randomUUID(), task(user, { title: "bad" })), ...change };
    const later = upsert("tasks", randomUUID(), task(user, { title: "later" }));
    const body = await pushOk(user, { ops: [good, bad, later] });
    expect(body.results.map((r) => [r.op_id, r.status])).toEqual([[good.op_id, "applied"], [bad.op_id, "rejected"], [later.op_id, "applied"]]);
    const error = body.results[1].error!;
    expect(error.code).toBe("VALIDATION_FAILED");
    expect(error.details!.map((d) => [d.field, d.code]).sort()).toEqual(details);
    expect(body.results[1].record).toBeUndefined();
    expect(await storedRow("tasks", good.record_id)).toMatchObject({ title: "good" });
    // Recorded like any rejection: the same op again is a duplicate with its first answer, nothing applied.
    const [row] = (await ledger(user.userId)).filter((r) => r.op_id === bad.op_id);
    expect(row).toMatchObject({ status: "rejected", error });
    const again = await pushOk(user, { ops: [good, bad, later] });
    expect(again.results[1]).toEqual({ op_id: bad.op_id, status: "duplicate", original_status: "rejected", error });
  });

  it("the same op_id twice in one batch → 400, nothing applied", async () => {
    const user = await createTestUser();
    const op = upsert("tasks", randomUUID(), task(user));
    const error = expectEnvelope(await push(user, { ops: [op, { ...op, record_id: randomUUID() }] }), 400, "VALIDATION_FAILED");
    expect(error.details).toEqual([{ field: "/ops/1/op_id", code: "duplicate", message: "appears twice in this batch" }]);
    expect(await storedRow("tasks", op.record_id)).toBeUndefined();
  });

  it("needs a signed-in user, JSON, and POST", async () => {
    expectEnvelope(await call("/v1/sync/batch", { method: "POST", body: { ops: [] } }), 401, "UNAUTHENTICATED");
    const user = await createTestUser();
    expectEnvelope(await pushRaw(user, "{"), 400, "MALFORMED_JSON");
    expectEnvelope(await call("/v1/sync/batch", { method: "POST", token: user.token, rawBody: "a=1", headers: { "content-type": "text/plain" } }), 415, "UNSUPPORTED_MEDIA_TYPE");
    expectEnvelope(await call("/v1/sync/batch", { token: user.token }), 405, "METHOD_NOT_ALLOWED");
  });
});

describe("POST /v1/sync/batch: ids are global, other users' ids are unknown ids", () => {
  it("a change, delete or create with another user's id is NOT_FOUND, exactly as for an unknown id, and reveals nothing", async () => {
    const alice = await createTestUser();
    const bob = await createTestUser();
    const id = randomUUID();
    const mine = await pushOk(alice, { ops: [upsert("tasks", id, task(alice, { title: "alice's secret", notes: "private" }))] });
    const aliceRecord = mine.results[0].record!;
    const unknown = randomUUID();
    const ops = [
      upsert("tasks", id, { done: true }, aliceRecord.version),
      upsert("tasks", unknown, { done: true }, aliceRecord.version),
      remove("tasks", id, aliceRecord.version),
      remove("tasks", unknown, null),
      upsert("tasks", id, task(bob, { title: "take over" })),
      upsert("lists", alice.userId, { title: "take over her list" }),
    ];
    const body = await pushOk(bob, { ops });
    expect(body.results.map((r) => [r.status, r.error?.code, r.record])).toEqual(ops.map(() => ["rejected", "NOT_FOUND", undefined]));
    // Same message, same kind of pointer, whatever the id.
    const shapes = body.results.map((r) => ({ ...r.error, details: r.error!.details!.map((d) => ({ ...d, field: d.field.replace(/^\/ops\/\d+/, "") })) }));
    for (const shape of shapes.slice(1, 5)) expect(shape).toEqual(shapes[0]);
    expect(JSON.stringify(body)).not.toContain("alice's secret");
    expect(await storedRow("tasks", id)).toEqual(aliceRecord.data);
    expect((await syncState("tasks", id))!.version).toBe(aliceRecord.version);
    expect(await storedRow("lists", alice.userId)).toMatchObject({ title: "Personal" });
    expect(await bookkeepingRows(unknown)).toEqual({ records: 0, changes: 0 });
  });
});

describe("POST /v1/sync/batch: limits", () => {
  let small: FunctionsServer;
  beforeAll(async () => {
    small = await startFunctionsServer({
      ...stack.functionsEnv,
      TIDESYNC_MAX_OPS_PER_BATCH: "3",
      TIDESYNC_MAX_BODY_BYTES: "4096",
      TIDESYNC_MAX_RECORD_DATA_BYTES: "600",
    }, { name: "sync-batch-limits" });
  });
  afterAll(async () => {
    await small?.stop();
  });

  it("more ops than max_ops_per_batch → 413 PAYLOAD_TOO_LARGE, nothing applied", async () => {
    const user = await createTestUser();
    const ops = [1, 2, 3, 4].map(() => upsert("tasks", randomUUID(), task(user)));
    expectEnvelope(await push(user, { ops }, small.apiUrl), 413, "PAYLOAD_TOO_LARGE");
    expect(await ledger(user.userId)).toHaveLength(0);
    expect((await pushOk(user, { ops: ops.slice(0, 3) }, small.apiUrl)).results.map((r) => r.status)).toEqual(["applied", "applied", "applied"]);
  });

  it("a body over max_body_bytes → 413 PAYLOAD_TOO_LARGE", async () => {
    const user = await createTestUser();
    expectEnvelope(await push(user, { ops: [upsert("tasks", randomUUID(), task(user, { notes: "x".repeat(5000) }))] }, small.apiUrl), 413, "PAYLOAD_TOO_LARGE");
    expect(await ledger(user.userId)).toHaveLength(0);
  });

  it("the record size limit comes from the configuration only: over it the op is rejected PAYLOAD_TOO_LARGE, under it applied", async () => {
    const user = await createTestUser();
    const id = randomUUID();
    const meta = await call("/v1/meta", { baseUrl: small.apiUrl });
    expect(meta.body.limits.max_record_data_bytes).toBe(600);
    const body = await pushOk(user, {
      ops: [
        upsert("tasks", id, task(user, { notes: "x".repeat(300) })),
        // Each patch is small; the merged record is what counts.
        upsert("tasks", id, { notes: "y".repeat(700) }),
        upsert("tasks", randomUUID(), task(user, { title: "ok" })),
      ],
    }, small.apiUrl);
    expect(body.results.map((r) => r.status)).toEqual(["applied", "rejected", "applied"]);
    expect(body.results[1].error).toMatchObject({ code: "PAYLOAD_TOO_LARGE", details: [{ field: "/ops/1/data", code: "too_large" }] });
    expect(body.results[1].error!.message).toMatch(/at most 600$/);
    expect(await storedRow("tasks", id)).toMatchObject({ notes: "x".repeat(300) });
    // The same change on the default server (64 KiB): nothing in the database bounds the size a second time.
    const stored = body.results[0].record!;
    const elsewhere = await pushOk(user, { ops: [upsert("tasks", id, { notes: "y".repeat(700) }, stored.version)] });
    expect(elsewhere.results[0].status).toBe("applied");
    expect(recordDataBytes(elsewhere.results[0].record!.data!)).toBeGreaterThan(600);
  });

  it("the record size is its data's compact UTF-8 JSON (api-v1.md), not Postgres' jsonb text: exactly at the limit applies, a byte over is rejected", async () => {
    const user = await createTestUser();
    // Postgres prints this as {"notes": "…", "title": "é", "list_id": "…"}: 5 bytes more than the JSON sent.
    const sized = (bytes: number) => {
      const data = task(user, { title: "é", notes: "" });
      return { ...data, notes: "x".repeat(bytes - Buffer.byteLength(JSON.stringify(data))) };
    };
    const atLimit = sized(600);
    expect(Buffer.byteLength(JSON.stringify(atLimit))).toBe(600);
    const body = await pushOk(user, { ops: [upsert("tasks", randomUUID(), atLimit), upsert("tasks", randomUUID(), sized(601))] }, small.apiUrl);
    expect(body.results.map((r) => r.status)).toEqual(["applied", "rejected"]);
    expect(body.results[1].error).toMatchObject({ code: "PAYLOAD_TOO_LARGE", message: "the record's data would be 601 bytes; at most 600" });
  });

  it("a create and an edit are measured alike: the columns only the server writes do not count, and a record created at the limit stays editable", async () => {
    const user = await createTestUser();
    const sized = (bytes: number, title = "t") => {
      const data = task(user, { title, notes: "" });
      return { ...data, notes: "x".repeat(bytes - Buffer.byteLength(JSON.stringify(data))) };
    };
    // Stored, the row also has created_by and created_at (~95 bytes), which no client writes.
    const [roomy, full] = [randomUUID(), randomUUID()];
    const created = await pushOk(user, { ops: [upsert("tasks", roomy, sized(450)), upsert("tasks", full, sized(600))] }, small.apiUrl);
    expect(created.results.map((r) => r.status)).toEqual(["applied", "applied"]);
    const [roomyV, fullV] = created.results.map((r) => r.record!.version);
    expect(recordDataBytes(created.results[1].record!.data!)).toBeGreaterThan(600);
    const edits = await pushOk(user, {
      ops: [
        // 490 bytes of what clients write (with the defaults done, due_date, position): under the limit.
        upsert("tasks", roomy, { notes: sized(490).notes }, roomyV),
        // The table's defaults took it over the limit; an edit that does not grow it is applied.
        upsert("tasks", full, { done: true }, fullV),
      ],
    }, small.apiUrl);
    expect(edits.results.map((r) => r.status)).toEqual(["applied", "applied"]);
    expect(await storedRow("tasks", full)).toMatchObject({ done: true });
    // Nor one that keeps its size (a title of one character for another).
    const same = await pushOk(user, { ops: [upsert("tasks", full, { title: "u" }, edits.results[1].record!.version)] }, small.apiUrl);
    expect(same.results[0].status).toBe("applied");
    const back = await pushOk(user, { ops: [upsert("tasks", full, { title: "t" }, same.results[0].record!.version)] }, small.apiUrl);
    // An edit that grows it further is not.
    const grown = await pushOk(user, { ops: [upsert("tasks", full, { title: "tt" }, back.results[0].record!.version)] }, small.apiUrl);
    expect(grown.results[0]).toMatchObject({ status: "rejected", error: { code: "PAYLOAD_TOO_LARGE" } });
    expect(await storedRow("tasks", full)).toMatchObject({ title: "t" });
  });

  it("more live records than max_live_records_per_user → the op rejected QUOTA_EXCEEDED; a delete frees room", async () => {
    const user = await createTestUser();
    expect(await liveRecords(user.userId)).toBe(0); // the personal list is the signup's, not the user's write
    // The quota is the database's (app_private.max_live_records_per_user(), 100,000; no variable changes it):
    // the user's count is set two below it (by the owner, exempt) rather than by writing 99,998 rows.
    const meta = await call("/v1/meta");
    const max = meta.body.limits.max_live_records_per_user as number;
    expect(max).toBe(MAX_LIVE_RECORDS_PER_USER);
    await adminSql`insert into app_private.sync_usage (user_id, live_records) values (${user.userId}, ${max - 2})
                   on conflict (user_id) do update set live_records = excluded.live_records`;
    const [a, b, c] = [randomUUID(), randomUUID(), randomUUID()];
    const first = await pushOk(user, { ops: [upsert("tasks", a, task(user, { title: "a" })), upsert("tasks", b, task(user, { title: "b" })), upsert("tasks", c, task(user, { title: "c" }))] });
    expect(first.results.map((r) => r.status)).toEqual(["applied", "applied", "rejected"]);
    expect(first.results[2].error).toEqual({ code: "QUOTA_EXCEEDED", message: `at most ${max} live records per user; delete some first` });
    expect(await storedRow("tasks", c)).toBeUndefined();
    expect(await liveRecords(user.userId)).toBe(max);
    // Updating a live record is not a new one; deleting one makes room (for the next batch: the
    // database counts each statement, and a batch writes its creates before its deletes).
    const second = await pushOk(user, {
      ops: [upsert("tasks", a, { done: true }, first.results[0].record!.version), remove("tasks", b, first.results[1].record!.version)],
    });
    expect(second.results.map((r) => r.status)).toEqual(["applied", "applied"]);
    expect(await liveRecords(user.userId)).toBe(max - 1);
    const third = await pushOk(user, { ops: [upsert("tasks", c, task(user, { title: "c" }))] });
    expect(third.results.map((r) => r.status)).toEqual(["applied"]);
    expect(await liveRecords(user.userId)).toBe(max);
  });

  it("at the quota, a delete and then a create in one batch are both applied: the delete runs first, as the batch's order has it", async () => {
    const user = await createTestUser();
    const max = MAX_LIVE_RECORDS_PER_USER;
    const b = randomUUID();
    const created = await pushOk(user, { ops: [upsert("tasks", b, task(user, { title: "b" }))] });
    await adminSql`update app_private.sync_usage set live_records = ${max} where user_id = ${user.userId}`;
    const c = randomUUID();
    const both = await pushOk(user, { ops: [remove("tasks", b, created.results[0].record!.version), upsert("tasks", c, task(user, { title: "c" }))] });
    // The planner counts in op order, and the database writes the delete before the create (until
    // the batch's order was kept, it wrote creates first and refused this create QUOTA_EXCEEDED).
    expect(both.results.map((r) => r.status)).toEqual(["applied", "applied"]);
    expect(await storedRow("tasks", b)).toBeUndefined();
    expect(await storedRow("tasks", c)).toBeDefined();
    expect(await liveRecords(user.userId)).toBe(max);
    // The other order is over the quota at the create: answered so, and the delete still applies.
    const d = randomUUID();
    const later = await pushOk(user, { ops: [upsert("tasks", d, task(user, { title: "d" })), remove("tasks", c, both.results[1].record!.version)] });
    expect(later.results.map((r) => r.status)).toEqual(["rejected", "applied"]);
    expect(later.results[0].error).toEqual({ code: "QUOTA_EXCEEDED", message: `at most ${max} live records per user; delete some first` });
    expect(await liveRecords(user.userId)).toBe(max - 1);
  });

  it("the Data API is held to the same quota: an insert as authenticated past it fails 23514, and the push still answers per op", async () => {
    const user = await createTestUser();
    const max = MAX_LIVE_RECORDS_PER_USER;
    await adminSql`insert into app_private.sync_usage (user_id, live_records) values (${user.userId}, ${max - 2})
                   on conflict (user_id) do update set live_records = excluded.live_records`;
    // What supabase-js does (PostgREST: role authenticated + the request's claims): three rows, one too many.
    const refused = await asUser(user, (tx) => tx`insert into public.tasks (list_id, title) select ${user.userId}::uuid, 't' || g from generate_series(1, 3) g`)
      .then(() => null, (error: { code?: string; constraint_name?: string; message?: string }) => error);
    expect(refused).toMatchObject({ code: "23514", constraint_name: "max_live_records_per_user", message: `at most ${max} live records per user; delete some first` });
    expect(await liveRecords(user.userId)).toBe(max - 2);
    await asUser(user, (tx) => tx`insert into public.tasks (list_id, title) select ${user.userId}::uuid, 't' || g from generate_series(1, 2) g`);
    expect(await liveRecords(user.userId)).toBe(max);
    // The push of a new record then answers that op, not the batch.
    const pushed = await pushOk(user, { ops: [upsert("tasks", randomUUID(), task(user, { title: "over" }))] });
    expect(pushed.results[0]).toMatchObject({ status: "rejected", error: { code: "QUOTA_EXCEEDED" } });
  });
});

describe("POST /v1/sync/batch: hardening (issue 8, point 9)", () => {
  it("a NUL or lone surrogate in an op's collection or in the name of an unknown data key → that op rejected, the rest applied, the replay a duplicate", async () => {
    const user = await createTestUser();
    const ops = [
      upsert("ta\u0000sks", randomUUID(), task(user)),
      upsert("tasks\uD800", randomUUID(), task(user)),
      upsert("tasks", randomUUID(), task(user, { "bad\u0000key": 1 })),
      upsert("tasks", randomUUID(), task(user, { "lone\uDC00": 1 })),
      upsert("tasks", randomUUID(), task(user, { title: "fine" })),
    ];
    const first = await pushOk(user, { ops });
    expect(first.results.map((r) => [r.status, r.error?.code])).toEqual([
      ["rejected", "VALIDATION_FAILED"], ["rejected", "VALIDATION_FAILED"], ["rejected", "VALIDATION_FAILED"], ["rejected", "VALIDATION_FAILED"], ["applied", undefined],
    ]);
    expect(first.results[0].error!.details).toEqual([expect.objectContaining({ field: "/ops/0/collection", code: "unknown_collection" })]);
    expect(first.results[1].error!.details).toEqual([expect.objectContaining({ field: "/ops/1/collection", code: "unknown_collection" })]);
    // A key Postgres cannot store is invalid_characters on its object (errors.md): a pointer naming
    // it would name, as stored and answered (NUL and the surrogate made U+FFFD), no key of the request.
    expect(first.results[2].error!.details).toEqual([expect.objectContaining({ field: "/ops/2/data", code: "invalid_characters" })]);
    expect(first.results[3].error!.details).toEqual([expect.objectContaining({ field: "/ops/3/data", code: "invalid_characters" })]);
    expect(await storedRow("tasks", ops[4].record_id)).toMatchObject({ title: "fine" });
    expect((await ledger(user.userId)).map((r) => r.status).sort()).toEqual(["applied", "rejected", "rejected", "rejected", "rejected"]);

    const replay = await pushOk(user, { ops });
    expect(replay.results.map((r) => [r.status, r.original_status])).toEqual([
      ["duplicate", "rejected"], ["duplicate", "rejected"], ["duplicate", "rejected"], ["duplicate", "rejected"], ["duplicate", "applied"],
    ]);
    expect(replay.results.map((r) => r.error)).toEqual(first.results.map((r) => r.error));
  });

  it("one op with ~118,000 unknown keys gets a small rejection, in the response, in the ledger and on replay", async () => {
    const user = await createTestUser();
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    const keys: Record<string, number> = {};
    for (let i = 0; i < 118_000; i++) {
      keys[alphabet[i % 62] + alphabet[Math.floor(i / 62) % 62] + alphabet[Math.floor(i / 3844) % 62]] = 0;
    }
    const flood = upsert("tasks", randomUUID(), { ...task(user), ...keys });
    // Long key names: each pointer is cut to a bounded length.
    const longNames = upsert("tasks", randomUUID(), { ...task(user), ...Object.fromEntries(Array.from({ length: 25 }, (_, i) => [`${i}`.padEnd(1000, "k"), 0])) });
    const ok = upsert("tasks", randomUUID(), task(user, { title: "still applied" }));
    const batch = { ops: [flood, longNames, ok] };
    expect(JSON.stringify(batch).length).toBeLessThan(1024 * 1024);

    const bounded = (result: { error?: { message: string; details?: { field: string; message: string }[] } }) => {
      expect(result.error!.details!.length).toBeGreaterThan(0);
      expect(result.error!.details!.length).toBeLessThanOrEqual(20);
      for (const detail of result.error!.details!) {
        expect(detail.field.length).toBeLessThanOrEqual(256);
        expect(detail.message.length).toBeLessThanOrEqual(256);
      }
      expect(Buffer.byteLength(JSON.stringify(result))).toBeLessThan(8 * 1024);
    };
    const first = await push(user, batch);
    expect(first.status, first.text.slice(0, 500)).toBe(200);
    expect(first.text.length).toBeLessThan(32 * 1024);
    const body = syncBatchResponseSchema.parse(first.body);
    expect(body.results.map((r) => r.status)).toEqual(["rejected", "rejected", "applied"]);
    expect(body.results[0].error).toMatchObject({ code: "VALIDATION_FAILED", message: "118000 fields are invalid" });
    bounded(body.results[0]);
    bounded(body.results[1]);

    const rows = await ledger(user.userId);
    const stored = rows.filter((r) => r.status === "rejected");
    expect(stored).toHaveLength(2);
    for (const row of stored) expect(row.error_bytes).toBeLessThanOrEqual(MAX_OP_ERROR_BYTES);

    const replay = await push(user, batch);
    expect(replay.status).toBe(200);
    expect(replay.text.length).toBeLessThan(32 * 1024);
    const again = syncBatchResponseSchema.parse(replay.body);
    expect(again.results.map((r) => r.status)).toEqual(["duplicate", "duplicate", "duplicate"]);
    expect(again.results[0].error).toEqual(body.results[0].error);
    expect(again.results[1].error).toEqual(body.results[1].error);
  });

  it("an op whose unknown keys are long multi-byte or escaped names is rejected with the details the ledger's byte bound holds, not a 500", async () => {
    const user = await createTestUser();
    // 20 keys of 300 characters: each pointer is cut to 256 UTF-16 units, which in the ledger's
    // JSON text are up to 3 bytes (€), 2 (", an emoji's half), or 6 (\u0001) each.
    const keys = (prefix: string, unit: string) => Object.fromEntries(Array.from({ length: 20 }, (_, i) => [prefix + unit.repeat(300) + i, 0]));
    const names = [["", "€"], ["", '"'], ["", "\u{1F600}"], ["x", "\u{1F600}"], ["", "\u0001"]];
    const ops = names.map(([prefix, unit]) => upsert("tasks", randomUUID(), { ...task(user), ...keys(prefix, unit) }));
    const ok = upsert("tasks", randomUUID(), task(user, { title: "still applied" }));
    const batch = { ops: [...ops, ok] };

    const first = await push(user, batch);
    expect(first.status, first.text.slice(0, 500)).toBe(200);
    const body = syncBatchResponseSchema.parse(first.body);
    expect(body.results.map((r) => [r.status, r.error?.code])).toEqual([...ops.map(() => ["rejected", "VALIDATION_FAILED"]), ["applied", undefined]]);
    for (const [i, result] of body.results.slice(0, ops.length).entries()) {
      expect(result.error!.message).toBe("20 fields are invalid");
      expect(result.error!.details!.length).toBeGreaterThan(0);
      for (const detail of result.error!.details!) {
        expect(detail).toMatchObject({ code: "unexpected_field", field: expect.stringMatching(new RegExp(`^/ops/${i}/data/`)) });
        expect(detail.field).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/); // no emoji cut in half
      }
    }
    expect(await storedRow("tasks", ok.record_id)).toMatchObject({ title: "still applied" });
    const stored = (await ledger(user.userId)).filter((r) => r.status === "rejected");
    expect(stored).toHaveLength(ops.length);
    for (const row of stored) expect(row.error_bytes).toBeLessThanOrEqual(MAX_OP_ERROR_BYTES);

    const replay = syncBatchResponseSchema.parse((await push(user, batch)).body);
    expect(replay.results.map((r) => r.status)).toEqual(batch.ops.map(() => "duplicate"));
    expect(replay.results.map((r) => r.error)).toEqual(body.results.map((r) => r.error));
  });

  it("deletes of never-seen ids are rejected NOT_FOUND and leave no tombstone or change entry", async () => {
    const user = await createTestUser();
    const ids = [randomUUID(), randomUUID(), randomUUID()];
    const ok = upsert("tasks", randomUUID(), task(user));
    const body = await pushOk(user, { ops: [remove("tasks", ids[0], null), remove("lists", ids[1], null), remove("tasks", ids[2], 7), ok] });
    expect(body.results.map((r) => [r.status, r.error?.code])).toEqual([
      ["rejected", "NOT_FOUND"], ["rejected", "NOT_FOUND"], ["rejected", "NOT_FOUND"], ["applied", undefined],
    ]);
    expect(body.results[0].error!.details).toEqual([expect.objectContaining({ field: "/ops/0/record_id", code: "not_found" })]);
    for (const id of ids) expect(await bookkeepingRows(id)).toEqual({ records: 0, changes: 0 });
    expect(await liveRecords(user.userId)).toBe(1);
  });

  for (const [literal, code] of [["1e309", "not_finite"], ["1e-400", "not_exact"], ["12345678901234567891", "not_exact"]]) {
    it(`"base_version": ${literal} → 400 VALIDATION_FAILED at /ops/0/base_version (${code}), nothing written`, async () => {
      const user = await createTestUser();
      const id = randomUUID();
      const text = `{"ops":[{"op_id":"${randomUUID()}","collection":"tasks","record_id":"${id}","type":"upsert","base_version":${literal},` +
        `"data":{"title":"x","list_id":"${user.userId}"}}]}`;
      const error = expectEnvelope(await pushRaw(user, text), 400, "VALIDATION_FAILED");
      expect(error.details).toEqual([expect.objectContaining({ field: "/ops/0/base_version", code })]);
      expect(await storedRow("tasks", id)).toBeUndefined();
      expect(await ledger(user.userId)).toHaveLength(0);
    });
  }

  it("a non-finite number in one op's data (1e309, -1e400) rejects that op (not_finite), the rest of the batch applies, nothing is stored as null", async () => {
    const user = await createTestUser();
    const [good, bad, nested] = [randomUUID(), randomUUID(), randomUUID()];
    const op = (id: string, data: string) =>
      `{"op_id":"${randomUUID()}","collection":"tasks","record_id":"${id}","type":"upsert","base_version":null,"data":${data}}`;
    const text = `{"ops":[${op(good, `{"title":"fine","list_id":"${user.userId}"}`)},` +
      `${op(bad, `{"title":"x","list_id":"${user.userId}","position":1e309}`)},` +
      `${op(nested, `{"title":"y","list_id":"${user.userId}","position":-1e400}`)}]}`;
    const response = await pushRaw(user, text);
    expect(response.status).toBe(200);
    const results = syncBatchResponseSchema.parse(response.body).results;
    expect(results.map((r) => r.status)).toEqual(["applied", "rejected", "rejected"]);
    expect(results[1].error).toMatchObject({ code: "VALIDATION_FAILED", details: [expect.objectContaining({ field: "/ops/1/data/position", code: "not_finite" })] });
    expect(results[2].error!.details).toEqual([expect.objectContaining({ field: "/ops/2/data/position", code: "not_finite" })]);
    expect(await storedRow("tasks", good)).toBeDefined();
    expect(await storedRow("tasks", bad)).toBeUndefined();
    expect(await storedRow("tasks", nested)).toBeUndefined();
  });

  it("device_id must be one of the caller's devices; omitted, the session's device is used", async () => {
    const { user, devices: [mine], rows: [mineRow] } = await userWithDevices(1);
    const { devices: [theirs] } = await userWithDevices(1);
    for (const deviceId of [theirs, randomUUID()]) {
      const op = upsert("tasks", randomUUID(), task(user));
      const error = expectEnvelope(await push(user, { device_id: deviceId, ops: [op] }), 400, "VALIDATION_FAILED");
      expect(error.details).toEqual([expect.objectContaining({ field: "/device_id" })]);
      expect(await storedRow("tasks", op.record_id)).toBeUndefined();
    }
    expect(await ledger(user.userId)).toHaveLength(0);

    const id = randomUUID();
    const body = await pushOk(user, { ops: [upsert("tasks", id, task(user))] });
    expect(body.results[0].status).toBe("applied");
    const state = await syncState("tasks", id);
    expect(fieldVersion(state!.field_versions, "title")).toEqual({ v: state!.version, d: mineRow });
    expect((await ledger(user.userId))[0].device_id).toBe(mine);
    // Named explicitly, it is the same device.
    const named = await pushOk(user, { device_id: mine, ops: [upsert("tasks", id, { title: "again" }, state!.version)] });
    expect(named.results[0].status).toBe("applied");
    expect(fieldVersion((await syncState("tasks", id))!.field_versions, "title")!.d).toBe(mineRow);
  });

  it("upper-case uuids are normalised once at the edge: responses and pulls are lower-case, a retry with the upper-case op_id is a duplicate", async () => {
    const { user, devices: [device], rows: [deviceRow] } = await userWithDevices(1);
    await settled();
    const start = await pullAll(user);
    const list = randomUUID();
    const id = randomUUID();
    const opId = randomUUID();
    const batch = {
      device_id: device.toUpperCase(),
      ops: [
        { ...upsert("lists", list.toUpperCase(), { title: "L" }) },
        { ...upsert("tasks", id.toUpperCase(), { title: "T", list_id: list.toUpperCase() }), op_id: opId.toUpperCase() },
      ],
    };
    const first = await pushOk(user, batch);
    expect(first.results.map((r) => r.status)).toEqual(["applied", "applied"]);
    expect(first.results[1].op_id).toBe(opId);
    expect(first.results.map((r) => r.record!.id)).toEqual([list, id]);
    expect(first.results[1].record!.data).toMatchObject({ list_id: list });
    await settled();
    const pulled = await pullAll(user, start.cursor);
    // the list, its task and the list's owner membership, every id lower-case
    expect(pulled.changes.map((c) => c.id).sort()).toEqual([list, id, ...await membershipIds(list)].sort());
    expect(pulled.changes.find((c) => c.id === id)!.data).toMatchObject({ list_id: list });
    expect(pulled.changes.find((c) => c.collection === "list_members")!.data).toMatchObject({ list_id: list, user_id: user.userId });

    const retry = await pushOk(user, batch);
    expect(retry.results.map((r) => [r.op_id, r.status])).toEqual([[batch.ops[0].op_id, "duplicate"], [opId, "duplicate"]]);
    const lower = await pushOk(user, { ops: [{ ...batch.ops[1], op_id: opId }] });
    expect(lower.results[0].status).toBe("duplicate");
    expect((await ledger(user.userId)).map((r) => r.op_id).sort()).toEqual([batch.ops[0].op_id, opId].sort());
    expect(fieldVersion((await syncState("tasks", id))!.field_versions, "title")!.d).toBe(deviceRow);
  });

  it("server_time of a push and of a pull come from the database clock, in one format", async () => {
    const user = await createTestUser();
    const body = await pushOk(user, { ops: [upsert("tasks", randomUUID(), task(user))] });
    expect(body.server_time).toMatch(WIRE_TIME);
    // The same transaction's clock stamped the record.
    expect(body.server_time).toBe(body.results[0].record!.updated_at);
    const page = await call("/v1/sync/changes", { token: user.token });
    expect(page.body.server_time).toMatch(WIRE_TIME);
    expect(page.body.server_time >= body.server_time).toBe(true);
    const [db] = await adminSql<{ now: string }[]>`select to_char(now() at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as now`;
    expect(page.body.server_time <= db.now).toBe(true);
  });
});

describe("record data size", () => {
  // Postgres refuses NUL and unpaired surrogates in jsonb; the collections refuse them too.
  // JSON.stringify writes exactly those as \u0000 and \udXXX escapes.
  const storable = (value: unknown) => !/\\u0000|\\ud[89a-f][0-9a-f]{2}/i.test(JSON.stringify(value));
  const dataArb = fc.dictionary(fc.string({ unit: "binary", maxLength: 8 }), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 6 }).filter(storable);

  it("jsonbTextBytes equals Postgres' octet_length of the jsonb text; recordDataBytes the UTF-8 bytes of JSON.stringify", async () => {
    await fc.assert(fc.asyncProperty(dataArb, async (data) => {
      const [row] = await adminSql<{ bytes: number }[]>`select octet_length(${JSON.stringify(data)}::text::jsonb::text) as bytes`;
      expect(jsonbTextBytes(data)).toBe(row.bytes);
      expect(recordDataBytes(data)).toBe(Buffer.byteLength(JSON.stringify(data)));
    }), { numRuns: 300 });
  });
});

describe("sample seed", () => {
  it("the seeded sample rows carry sync state and merge like pushed ones", async () => {
    const fixture = await loadSampleTodo();
    const [alice, bob] = (await loadSampleUsers()).users;
    const work = fixture.lists.find((l) => !l.personal && l.members.length === 0 && l.created_by === alice.id)!;
    const seeded = work.tasks[0];
    const state = await syncState("tasks", seeded.id);
    expect(state).toMatchObject({ deleted: false, scope_id: work.id });
    // A stale op against a seeded row conflicts and changes nothing.
    const token = await signEs256(stack.keys.privateJwk, supabaseClaims({ userId: alice.id, sessionId: alice.session_id, email: alice.email }));
    const before = await storedRow("tasks", seeded.id);
    const body = await pushOk(token, { ops: [upsert("tasks", seeded.id, { title: "stale" }, 0)] });
    expect(body.results[0]).toMatchObject({ status: "conflict", record: { id: seeded.id, data: before } });
    expect(await storedRow("tasks", seeded.id)).toEqual(before);
    // Bob is not a member of Alice's private list: for him the row does not exist.
    const bobToken = await signEs256(stack.keys.privateJwk, supabaseClaims({ userId: bob.id, sessionId: bob.session_id, email: bob.email }));
    const bobs = await pushOk(bobToken, { ops: [upsert("tasks", seeded.id, { title: "peek" }, state!.version)] });
    expect(bobs.results[0]).toMatchObject({ status: "rejected", error: { code: "NOT_FOUND" } });
    expect(bobs.results[0].record).toBeUndefined();
  });
});

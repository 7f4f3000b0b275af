// planBatch (functions/api/sync/plan-batch.ts): how a batch is decided in
// memory between the store's one read and its one write.
import { describe, expect, it } from "vitest";
import { planBatch, type BatchState, type StoredOpResult } from "../../functions/api/sync/plan-batch.ts";
import { plainNumber, recordDataBytes } from "../../functions/_shared/record-size.ts";
import type { SyncOp } from "../../functions/_shared/schemas/sync.ts";

const NOW = "2026-11-22T01:00:00.000000Z";
const LIMITS = { max_record_data_bytes: 200, max_live_records_per_user: 3 };
let counter = 0;
const uuid = () => `00000000-0000-4000-8000-${String(++counter).padStart(12, "0")}`;

function op(partial: Partial<SyncOp> & Pick<SyncOp, "record_id">): SyncOp {
  return { op_id: uuid(), collection: "tasks", type: "upsert", base_version: null, data: {}, ...partial };
}

function state(partial: Partial<BatchState> = {}): BatchState {
  return { lastSeq: 10, liveRecords: 0, ledger: new Map(), records: new Map(), ...partial };
}

describe("planBatch", () => {
  it("allocates consecutive seqs to written ops only; conflicts and rejections take none", () => {
    const id = uuid();
    const plan = planBatch([
      op({ record_id: id, data: { title: "a" } }),
      op({ record_id: uuid(), collection: "nope" }),
      op({ record_id: id, data: { done: true } }),
      op({ record_id: uuid(), data: { title: "x".repeat(300) } }),
    ], "dev", state(), LIMITS, NOW);
    expect(plan.results.map((r) => r.status)).toEqual(["applied", "rejected", "applied", "rejected"]);
    expect(plan.results.map((r) => r.record?.version)).toEqual([11, undefined, 12, undefined]);
    expect(plan.lastSeq).toBe(12);
    expect(plan.writes).toHaveLength(1);
    expect(plan.writes[0]).toMatchObject({ version: 12, data: { title: "a", done: true } });
    expect(plan.ledgerRows.map((r) => [r.status, r.version])).toEqual([["applied", 11], ["rejected", null], ["applied", 12], ["rejected", null]]);
    expect(plan.results[3].error).toMatchObject({ code: "VALIDATION_FAILED", details: [{ field: "/ops/3/data/title", code: "too_long" }] });
  });

  it("answers a known op_id as duplicate with the original outcome and does not log it again", () => {
    const original: StoredOpResult = { op_id: "x", status: "rejected", error: { code: "QUOTA_EXCEEDED", message: "full" } };
    const known = op({ record_id: uuid() });
    const plan = planBatch([known], "dev", state({ ledger: new Map([[known.op_id, original]]) }), LIMITS, NOW);
    expect(plan.results).toEqual([{ op_id: known.op_id, status: "duplicate", original_status: "rejected", error: original.error }]);
    expect(plan.ledgerRows).toEqual([]);
    expect(plan.lastSeq).toBe(10);
  });

  it("counts live records for the quota: creates add, deletes free, updates are neutral", () => {
    const [a, b, c, d] = [uuid(), uuid(), uuid(), uuid()];
    const plan = planBatch([
      op({ record_id: a }), op({ record_id: b }), op({ record_id: a, data: { done: true } }),
      op({ record_id: c }), op({ record_id: d }),
      op({ record_id: b, type: "delete", data: undefined }), op({ record_id: d }),
    ], "dev", state({ liveRecords: 1 }), LIMITS, NOW);
    expect(plan.results.map((r) => r.status)).toEqual(["applied", "applied", "applied", "rejected", "rejected", "applied", "applied"]);
    expect(plan.results[3].error!.code).toBe("QUOTA_EXCEEDED");
    expect(plan.liveRecords).toBe(3);
  });

  it("rejects data over the size limit, measured on the merged record", () => {
    const id = uuid();
    const plan = planBatch([op({ record_id: id, data: { notes: "n".repeat(150) } }), op({ record_id: id, data: { title: "t".repeat(60) } })], "dev", state(), LIMITS, NOW);
    expect(plan.results.map((r) => r.status)).toEqual(["applied", "rejected"]);
    expect(plan.results[1].error).toMatchObject({ code: "PAYLOAD_TOO_LARGE", details: [{ field: "/ops/1/data", code: "too_large" }] });
  });
});

describe("recordDataBytes", () => {
  it("measures Postgres' jsonb text: spaced separators, plain-notation numbers, UTF-8", () => {
    expect(recordDataBytes({})).toBe(2);
    expect(recordDataBytes({ a: 1, b: [true, null] })).toBe('{"a": 1, "b": [true, null]}'.length);
    expect(recordDataBytes({ é: "€" })).toBe(new TextEncoder().encode('{"é": "€"}').byteLength);
    expect(recordDataBytes({ q: 'say "hi"\n' })).toBe('{"q": "say \\"hi\\"\\n"}'.length);
  });

  it("writes numbers as Postgres' numeric prints them", () => {
    expect(plainNumber(1e21)).toBe("1000000000000000000000");
    expect(plainNumber(1.5e-7)).toBe("0.00000015");
    expect(plainNumber(-2.5e22)).toBe("-25000000000000000000000");
    expect(plainNumber(0.125)).toBe("0.125");
    expect(plainNumber(-0)).toBe("0");
  });
});

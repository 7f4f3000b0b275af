// The field-level merge (functions/_shared/merge.ts): the rules table as
// examples, then each claim as a fast-check property against an independent
// model built from the record's write history (not from field_versions).
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ALL_FIELDS, type JsonObject, type MergeOp, mergeOp, type MergeResult, type ServerRecord } from "../../functions/_shared/merge.ts";

const NOW = "2026-11-22T01:00:00.000000Z";
const A = "device-a";
const B = "device-b";

/** A merge outside any batch (no earlier writes of the same batch). */
function merge(current: ServerRecord | null, op: MergeOp, deviceId: string | null, seq: number): MergeResult {
  return mergeOp(current, op, { collection: "tasks", id: "r1", deviceId, seq, now: NOW, batchFloor: Number.POSITIVE_INFINITY });
}

function applied(result: MergeResult): ServerRecord {
  if (result.outcome !== "applied") throw new Error(`expected applied, got conflict on ${result.fields.join(",")}`);
  return result.next;
}

const up = (data: JsonObject, base: number | null): MergeOp => ({ type: "upsert", base_version: base, data });
const del = (base: number | null): MergeOp => ({ type: "delete", base_version: base });

describe("merge rules (docs/sync.md table)", () => {
  const created = applied(merge(null, up({ title: "t", done: false }, null), A, 1));

  it("create on a missing record stamps every patched field", () => {
    expect(created).toMatchObject({ version: 1, deleted: false, data: { title: "t", done: false } });
    expect(created.field_versions).toEqual({ title: { v: 1, d: A }, done: { v: 1, d: A } });
  });

  it("update/update on different fields: both apply", () => {
    const a = applied(merge(created, up({ title: "A" }, 1), A, 2));
    const b = applied(merge(a, up({ done: true }, 1), B, 3));
    expect(b.data).toEqual({ title: "A", done: true });
    expect(b.field_versions).toEqual({ title: { v: 2, d: A }, done: { v: 3, d: B } });
  });

  it("update/update on the same field from another device: the later one conflicts with the current record", () => {
    const a = applied(merge(created, up({ title: "A" }, 1), A, 2));
    const b = merge(a, up({ title: "B", done: true }, 1), B, 3);
    expect(b).toEqual({ outcome: "conflict", current: a, fields: ["title"] });
  });

  it("an op without a device conflicts with any newer write (it cannot prove the write was its own)", () => {
    const a = applied(merge(created, up({ title: "A" }, 1), A, 2));
    expect(merge(a, up({ title: "B" }, 1), null, 3).outcome).toBe("conflict");
    expect(merge(a, up({ title: "B" }, 2), null, 3).outcome).toBe("applied");
  });

  it("update after a concurrent delete: conflict with the tombstone", () => {
    const gone = applied(merge(created, del(1), B, 2));
    expect(gone).toMatchObject({ deleted: true, data: null, field_versions: { [ALL_FIELDS]: { v: 2, d: B } } });
    expect(merge(gone, up({ done: true }, 1), A, 3)).toEqual({ outcome: "conflict", current: gone, fields: [ALL_FIELDS] });
  });

  it("delete after a concurrent update by another device: conflict (the update is not silently lost)", () => {
    const changed = applied(merge(created, up({ done: true }, 1), B, 2));
    expect(merge(changed, del(1), A, 3)).toEqual({ outcome: "conflict", current: changed, fields: ["done"] });
    expect(merge(changed, del(2), A, 3).outcome).toBe("applied");
  });

  it('a row stamped "*" by the database\'s insert merges as if each column were stamped, and a delete\'s conflict names them', () => {
    const inserted: ServerRecord = { ...created, field_versions: { [ALL_FIELDS]: { v: 1, d: B } } };
    const perColumn: ServerRecord = { ...created, field_versions: { title: { v: 1, d: B }, done: { v: 1, d: B } } };
    for (const record of [inserted, perColumn]) {
      expect(merge(record, del(0), A, 2)).toEqual({ outcome: "conflict", current: record, fields: ["done", "title"] });
      expect(merge(record, up({ title: "x" }, 0), A, 2)).toMatchObject({ outcome: "conflict", fields: ["title"] });
      expect(merge(record, del(1), A, 2).outcome).toBe("applied");
      expect(merge(record, del(0), B, 2).outcome).toBe("applied");
    }
    const edited = applied(merge(inserted, up({ title: "mine" }, 1), A, 2));
    expect(edited.field_versions).toEqual({ [ALL_FIELDS]: { v: 1, d: B }, title: { v: 2, d: A } });
    expect(merge(edited, del(0), A, 3)).toEqual({ outcome: "conflict", current: edited, fields: ["done"] });
  });

  it("a field only the server writes (created_by set null by a purge) never makes a delete conflict; an update merges past it", () => {
    const serverFields = new Set(["created_by", "created_at"]);
    const withServer = (current: ServerRecord, op: MergeOp, deviceId: string | null, seq: number) =>
      mergeOp(current, op, { collection: "tasks", id: "r1", deviceId, seq, now: NOW, batchFloor: Number.POSITIVE_INFINITY, serverFields });
    const inserted: ServerRecord = { ...created, data: { title: "t", done: false, created_by: "alice", created_at: NOW }, field_versions: { [ALL_FIELDS]: { v: 1, d: A } } };
    // The creator's account purged: the foreign key's set null, written by no device.
    const forgotten: ServerRecord = { ...inserted, version: 2, data: { ...inserted.data, created_by: null }, field_versions: { ...inserted.field_versions, created_by: { v: 2, d: null } } };
    expect(applied(withServer(forgotten, del(1), B, 3))).toMatchObject({ deleted: true, data: null });
    expect(applied(withServer(forgotten, up({ title: "B" }, 1), B, 3)).data).toEqual({ title: "B", done: false, created_by: null, created_at: NOW });
    // A change a device made still makes the delete conflict, named without the server's fields.
    const edited = applied(withServer(forgotten, up({ done: true }, 2), A, 3));
    expect(withServer(edited, del(1), B, 4)).toEqual({ outcome: "conflict", current: edited, fields: ["done"] });
    // "*" covers only client fields: an insert by another device since the base conflicts on them.
    expect(withServer(forgotten, del(0), B, 3)).toEqual({ outcome: "conflict", current: forgotten, fields: ["done", "title"] });
    // Without the collection's server fields, the bookkeeping counted (what the purge broke).
    expect(merge(forgotten, del(1), B, 3)).toMatchObject({ outcome: "conflict", fields: ["created_by"] });
  });

  it("create twice (base null, record exists): fields the other device set conflict, new fields merge", () => {
    expect(merge(created, up({ title: "again" }, null), B, 2)).toMatchObject({ outcome: "conflict", fields: ["title"] });
    expect(applied(merge(created, up({ notes: "n" }, null), B, 2)).data).toEqual({ title: "t", done: false, notes: "n" });
    expect(applied(merge(created, up({ title: "mine again" }, null), A, 2)).data).toEqual({ title: "mine again", done: false });
  });

  it("same-device chains never conflict, across stale bases and deletes", () => {
    const r2 = applied(merge(created, up({ title: "2" }, 1), A, 2));
    const r3 = applied(merge(r2, del(1), A, 3));
    const r4 = applied(merge(r3, up({ title: "back" }, 1), A, 4));
    expect(r4).toMatchObject({ deleted: false, data: { title: "back" }, created_at: created.created_at });
    expect(r4.field_versions[ALL_FIELDS]).toEqual({ v: 3, d: A });
  });

  it("a re-created record remembers the delete: an op based before it conflicts on fields it did not re-set", () => {
    const gone = applied(merge(created, del(1), B, 2));
    const again = applied(merge(gone, up({ title: "new life" }, 2), B, 3));
    expect(merge(again, up({ done: true }, 1), A, 4)).toMatchObject({ outcome: "conflict", fields: ["done"] });
    expect(merge(again, up({ done: true }, 2), A, 4).outcome).toBe("applied");
  });

  it("delete of a tombstone is applied without a write; delete of a missing record writes a tombstone", () => {
    const gone = applied(merge(created, del(1), A, 2));
    expect(merge(gone, del(0), B, 3)).toEqual({ outcome: "applied", next: gone, written: false });
    expect(applied(merge(null, del(null), B, 5))).toMatchObject({ version: 5, deleted: true, data: null, field_versions: { [ALL_FIELDS]: { v: 5, d: B } } });
  });

  it("writes made earlier in the same batch are the op's own, even without a device", () => {
    const first = mergeOp(null, up({ title: "x" }, null), { collection: "tasks", id: "r1", deviceId: null, seq: 8, now: NOW, batchFloor: 7 });
    const second = mergeOp(applied(first), up({ title: "y" }, null), { collection: "tasks", id: "r1", deviceId: null, seq: 9, now: NOW, batchFloor: 7 });
    expect(applied(second).data).toEqual({ title: "y" });
  });

  it("refuses a seq that does not exceed the record's version", () => {
    expect(() => merge(created, up({ title: "x" }, 1), A, 1)).toThrow(RangeError);
  });
});

// ---------------------------------------------------------------- properties

const FIELDS = ["title", "notes", "done", "position"] as const;
/** A field no op ever writes: stands for "every other field" of the model. */
const NEVER_WRITTEN = "untouched";
const DEVICES = [A, B, "device-c"] as const;

const valueArb = fc.oneof(fc.integer(), fc.string({ maxLength: 5 }), fc.boolean(), fc.constant(null));
const patchArb = fc.dictionary(fc.constantFrom(...FIELDS), valueArb, { maxKeys: FIELDS.length });
const deviceArb = fc.constantFrom<string | null>(...DEVICES, null);
const opArb: fc.Arbitrary<MergeOp> = fc.oneof(
  { weight: 4, arbitrary: patchArb.map((data) => up(data, 0)) },
  { weight: 1, arbitrary: fc.constant(del(0)) },
);
const historyArb = fc.array(fc.record({ op: opArb, device: deviceArb }), { minLength: 1, maxLength: 8 });

interface Write {
  seq: number;
  device: string | null;
  /** Fields the write set; "all" for a delete. */
  fields: readonly string[] | "all";
}

/** Builds a record by applying each history op with a fresh base (they always apply), logging the writes. */
function build(history: { op: MergeOp; device: string | null }[]): { record: ServerRecord | null; log: Write[]; model: JsonObject | null } {
  let record: ServerRecord | null = null;
  let model: JsonObject | null = null;
  const log: Write[] = [];
  for (const { op, device } of history) {
    const seq = (record?.version ?? 0) + 1;
    const result = merge(record, { ...op, base_version: record?.version ?? null }, device, seq);
    const next = applied(result);
    if (result.outcome === "applied" && result.written) {
      log.push({ seq, device, fields: op.type === "delete" ? "all" : Object.keys(op.data ?? {}) });
      model = op.type === "delete" ? null : { ...(record && !record.deleted ? model : {}), ...op.data };
    }
    record = next;
  }
  return { record, log, model };
}

/** The last write of `field` in the log (a delete writes every field). */
function lastWriter(log: Write[], field: string): Write | undefined {
  for (let i = log.length - 1; i >= 0; i--) {
    const write = log[i];
    if (write.fields === "all" || write.fields.includes(field)) return write;
  }
  return undefined;
}

const foreignAfter = (write: Write | undefined, base: number, device: string | null) =>
  write !== undefined && write.seq > base && (device === null || write.device !== device);

const scenarioArb = historyArb.chain((history) => {
  const { record } = build(history);
  const top = record?.version ?? 0;
  return fc.record({
    history: fc.constant(history),
    op: opArb,
    base: fc.integer({ min: 0, max: top }),
    device: deviceArb,
  });
});

describe("merge properties", () => {
  it("conflict iff another (or an unknown) device last wrote a field the op touches after its base", () => {
    fc.assert(fc.property(scenarioArb, ({ history, op, base, device }) => {
      const { record, log } = build(history);
      const result = merge(record, { ...op, base_version: base }, device, (record?.version ?? 0) + 1);
      let expected: boolean;
      if (!record) expected = false;
      else if (record.deleted) expected = op.type === "upsert" && foreignAfter(log.at(-1), base, device);
      else if (op.type === "upsert") expected = Object.keys(op.data ?? {}).some((f) => foreignAfter(lastWriter(log, f), base, device));
      else expected = [...FIELDS, NEVER_WRITTEN].some((f) => foreignAfter(lastWriter(log, f), base, device));
      expect(result.outcome === "conflict").toBe(expected);
      if (result.outcome === "conflict") expect(result.current).toBe(record);
    }), { numRuns: 2000 });
  });

  it("an applied op leaves exactly the model's data: old fields overlaid by the patch, or null for a delete", () => {
    fc.assert(fc.property(historyArb, (history) => {
      const { record, model } = build(history);
      expect(record!.data).toEqual(model);
      expect(record!.deleted).toBe(model === null);
    }));
  });

  it("an applied write gets the new version, stamps exactly the patched fields and keeps the others' stamps", () => {
    fc.assert(fc.property(scenarioArb, ({ history, op, base, device }) => {
      const { record } = build(history);
      const seq = (record?.version ?? 0) + 1;
      const result = merge(record, { ...op, base_version: base }, device, seq);
      if (result.outcome !== "applied" || !result.written || op.type !== "upsert") return;
      expect(result.next.version).toBe(seq);
      for (const [field, stamp] of Object.entries(result.next.field_versions)) {
        if (field in (op.data ?? {})) expect(stamp).toEqual({ v: seq, d: device });
        else expect(stamp).toEqual(record!.field_versions[field]);
      }
    }));
  });

  it("convergence: two devices' non-overlapping edits on the same base apply in either order to the same data", () => {
    fc.assert(fc.property(historyArb, patchArb, patchArb, (history, p1, p2) => {
      const { record } = build(history);
      fc.pre(record !== null && !record.deleted);
      const disjoint = Object.fromEntries(Object.entries(p2).filter(([k]) => !(k in p1)));
      const base = record!.version;
      const ab = applied(merge(applied(merge(record, up(p1, base), A, base + 1)), up(disjoint, base), B, base + 2));
      const ba = applied(merge(applied(merge(record, up(disjoint, base), B, base + 1)), up(p1, base), A, base + 2));
      expect(ab.data).toEqual(ba.data);
      expect(ab.data).toEqual({ ...record!.data, ...p1, ...disjoint });
    }));
  });

  it("overlapping edits of two devices on the same base: whichever comes second conflicts, in either order", () => {
    fc.assert(fc.property(historyArb, patchArb, patchArb, fc.constantFrom(...FIELDS), valueArb, (history, p1, p2, shared, value) => {
      const { record } = build(history);
      fc.pre(record !== null && !record.deleted);
      const base = record!.version;
      const o1 = up({ ...p1, [shared]: value }, base);
      const o2 = up({ ...p2, [shared]: value }, base);
      expect(merge(applied(merge(record, o1, A, base + 1)), o2, B, base + 2).outcome).toBe("conflict");
      expect(merge(applied(merge(record, o2, B, base + 1)), o1, A, base + 2).outcome).toBe("conflict");
    }));
  });

  it("idempotence: the same device re-applying the same op changes nothing more", () => {
    fc.assert(fc.property(scenarioArb, fc.constantFrom(...DEVICES), ({ history, op, base }, device) => {
      const { record } = build(history);
      const seq = (record?.version ?? 0) + 1;
      const once = merge(record, { ...op, base_version: base }, device, seq);
      fc.pre(once.outcome === "applied");
      const twice = merge(applied(once), { ...op, base_version: base }, device, seq + 1);
      expect(applied(twice).data).toEqual(applied(once).data);
      expect(applied(twice).deleted).toBe(applied(once).deleted);
    }));
  });

  it("same-device chains: ops of one device on a stale base never conflict with each other and apply in order", () => {
    fc.assert(fc.property(historyArb, fc.array(opArb, { minLength: 1, maxLength: 6 }), fc.constantFrom(...DEVICES), (history, chain, device) => {
      const { record } = build(history);
      const base = record?.version ?? null;
      let current = record;
      let model: JsonObject | null = record?.data ?? null;
      chain.forEach((op, i) => {
        current = applied(merge(current, { ...op, base_version: base }, device, (base ?? 0) + i + 1));
        model = op.type === "delete" ? null : { ...(model ?? {}), ...op.data };
      });
      expect(current!.data).toEqual(model);
    }));
  });

  it("independence: an edit never changes fields outside its patch", () => {
    fc.assert(fc.property(scenarioArb, ({ history, op, base, device }) => {
      const { record } = build(history);
      fc.pre(record !== null && !record.deleted && op.type === "upsert");
      const result = merge(record, { ...op, base_version: base }, device, record!.version + 1);
      if (result.outcome !== "applied") return;
      for (const [field, value] of Object.entries(record!.data!)) {
        if (!(field in op.data!)) expect(result.next.data![field]).toEqual(value);
      }
    }));
  });
});

// Values of column types the sample app does not have (jsonb, arrays, enums,
// numeric, bigint), pushed through the real function (POST /v1/sync/batch) to
// a synced table of a stack of its own (tests/support/probe-stack.ts). What a
// user would notice: a value that the database cannot take failing the whole
// batch (a retryable 500 that fails again on every retry) instead of that op,
// or a value stored as something other than what was sent.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_JSON_DEPTH } from "../../functions/_shared/limits.ts";
import { type ApiResponse, call } from "../support/harness.ts";
import { type ProbeStack, type ProbeUser, startProbeStack, syncedLikeTasks } from "../support/probe-stack.ts";
import { settled, upsert } from "../support/shared-lists.ts";

const COLUMNS = ["doc", "tags", "counts", "priority", "priorities", "amount", "big", "ratio", "label", "tiny", "cents", "hundreds"];

let probe: ProbeStack;

beforeAll(async () => {
  probe = await startProbeStack("colvalues", [
    `create type public.tidesync_test_item_priority as enum ('low', 'normal', 'high')`,
    `create table public.tidesync_test_items (
       id uuid primary key,
       list_id uuid not null references public.lists (id) on delete cascade,
       doc jsonb, tags text[], counts integer[], priority public.tidesync_test_item_priority, priorities public.tidesync_test_item_priority[],
       amount numeric, big bigint, ratio double precision, label text, tiny numeric(40, 20), cents numeric(10, 2)[], hundreds numeric(5, -2))`,
    ...syncedLikeTasks("tidesync_test_items", COLUMNS),
  ]);
});

afterAll(async () => {
  await probe?.stop();
});

/** POST /v1/sync/batch on the probe server, the body sent as this text. */
async function pushText(user: ProbeUser, text: string): Promise<ApiResponse> {
  return await call("/v1/sync/batch", { method: "POST", token: user.token, rawBody: text, headers: { "content-type": "application/json" }, baseUrl: probe.apiUrl });
}

async function pushOps(user: ProbeUser, ops: unknown[]): Promise<ApiResponse> {
  return await call("/v1/sync/batch", { method: "POST", token: user.token, body: { ops }, baseUrl: probe.apiUrl });
}

/** An item in the user's personal list. */
const item = (user: ProbeUser, data: Record<string, unknown>) => upsert("tidesync_test_items", randomUUID(), { list_id: user.userId, ...data });

/** The stored row's columns as Postgres prints them. */
async function stored(id: string): Promise<Record<string, string | null> | undefined> {
  const [row] = await probe.admin.unsafe(`select doc::text, tags::text, counts::text, priority::text, amount::text, big::text, ratio::text from public.tidesync_test_items where id = $1`, [id]);
  return row as Record<string, string | null> | undefined;
}

describe("json/jsonb, array and enum values the database cannot store", () => {
  it("a NUL or an unpaired surrogate in a jsonb string or key, a text[] element or an enum value rejects that op (invalid_characters, at its pointer); the rest of the batch applies", async () => {
    const user = await probe.newUser();
    const ok = item(user, { doc: { note: "fine" }, tags: ["a"], priority: "low" });
    const bad = [
      item(user, { doc: { a: ["x\u0000y"] } }),
      item(user, { doc: { "k\uD800": 1 } }),
      item(user, { doc: { b: "\uDC00" } }),
      item(user, { tags: ["ok", "nul\u0000"] }),
      item(user, { priority: "low\u0000" }),
    ];
    const response = await pushOps(user, [ok, ...bad]);
    expect(response.status, response.text).toBe(200);
    const results = response.body.results as { status: string; error?: { code: string; details: { field: string; code: string }[] } }[];
    expect(results[0].status).toBe("applied");
    expect(results.slice(1).map((r) => [r.status, r.error?.code, r.error?.details.map((d) => [d.field, d.code])])).toEqual([
      ["rejected", "VALIDATION_FAILED", [["/ops/1/data/doc/a/0", "invalid_characters"]]],
      ["rejected", "VALIDATION_FAILED", [["/ops/2/data/doc", "invalid_characters"]]],
      ["rejected", "VALIDATION_FAILED", [["/ops/3/data/doc/b", "invalid_characters"]]],
      ["rejected", "VALIDATION_FAILED", [["/ops/4/data/tags/1", "invalid_characters"]]],
      // Not one of the enum's labels (enum_values) either, which is what its detail says.
      ["rejected", "VALIDATION_FAILED", [["/ops/5/data/priority", "invalid_value"]]],
    ]);
    expect(await stored(ok.record_id)).toMatchObject({ doc: '{"note": "fine"}', tags: "{a}", priority: "low" });
    for (const op of bad) expect(await stored(op.record_id)).toBeUndefined();
  });

  it(`a jsonb value nested deeper than ${MAX_JSON_DEPTH} (3,000 deep, a 6 KB body) rejects that op (too_deep); ${MAX_JSON_DEPTH} deep is stored as sent`, async () => {
    const user = await probe.newUser();
    const deep = randomUUID();
    const limit = randomUUID();
    const nested = (depth: number) => "[".repeat(depth) + "]".repeat(depth);
    const op = (id: string, doc: string) =>
      `{"op_id":"${randomUUID()}","collection":"tidesync_test_items","record_id":"${id}","type":"upsert","base_version":null,"data":{"list_id":"${user.userId}","doc":${doc}}}`;
    const text = `{"ops":[${op(deep, nested(3000))},${op(limit, nested(MAX_JSON_DEPTH))}]}`;
    expect(text.length).toBeLessThan(7 * 1024);
    const response = await pushText(user, text);
    expect(response.status, response.text).toBe(200);
    const [tooDeep, atLimit] = response.body.results;
    expect(tooDeep).toMatchObject({ status: "rejected", error: { code: "VALIDATION_FAILED" } });
    expect(tooDeep.error.details).toEqual([
      expect.objectContaining({ field: "/ops/0/data/doc" + "/0".repeat(MAX_JSON_DEPTH), code: "too_deep" }),
    ]);
    expect(atLimit.status).toBe("applied");
    expect(JSON.stringify(atLimit.record.data.doc)).toBe(nested(MAX_JSON_DEPTH));
    expect((await stored(limit))!.doc!.replaceAll(" ", "")).toBe(nested(MAX_JSON_DEPTH));
    expect(await stored(deep)).toBeUndefined();
  });
});

describe("array columns", () => {
  it("an element of another type rejects that op at its index (an object or a number in text[], a string in integer[]) instead of being stored as text; elements of the type, nulls and multidimensional arrays are stored as sent", async () => {
    const user = await probe.newUser();
    const good = item(user, { tags: ["a", null, 'q"uote'], counts: [[1, 2], [3, null]] });
    const bad = [item(user, { tags: [{ a: 1 }] }), item(user, { tags: ["a", 1, true] }), item(user, { counts: ["1"] })];
    const response = await pushOps(user, [...bad, good]);
    expect(response.status, response.text).toBe(200);
    const results = response.body.results as { status: string; error?: { details: { field: string; code: string }[] }; record?: { data: Record<string, unknown> } }[];
    expect(results.map((r) => [r.status, r.error?.details.map((d) => [d.field, d.code])])).toEqual([
      ["rejected", [["/ops/0/data/tags/0", "invalid_type"]]],
      ["rejected", [["/ops/1/data/tags/1", "invalid_type"], ["/ops/1/data/tags/2", "invalid_type"]]],
      ["rejected", [["/ops/2/data/counts/0", "invalid_type"]]],
      ["applied", undefined],
    ]);
    expect(results[3].record!.data).toMatchObject({ tags: ["a", null, 'q"uote'], counts: [[1, 2], [3, null]] });
    expect(await stored(good.record_id)).toMatchObject({ tags: '{a,NULL,"q\\"uote"}', counts: "{{1,2},{3,NULL}}" });
    for (const op of bad) expect(await stored(op.record_id)).toBeUndefined();
  });

  it("a multidimensional array that is not rectangular is the database's refusal of that op, not of the batch", async () => {
    const user = await probe.newUser();
    const ragged = item(user, { counts: [[1, 2], [3]] });
    const fine = item(user, { counts: [5] });
    const response = await pushOps(user, [ragged, fine]);
    expect(response.status, response.text).toBe(200);
    expect(response.body.results.map((r: { status: string; error?: { code: string } }) => [r.status, r.error?.code])).toEqual([["rejected", "VALIDATION_FAILED"], ["applied", undefined]]);
    expect(await stored(ragged.record_id)).toBeUndefined();
    expect(await stored(fine.record_id)).toMatchObject({ counts: "{5}" });
  });
});

describe("enum columns", () => {
  it("GET /v1/meta publishes an enum column's values (enum_values, in the enum's order, also for an array of it), read by npm run generate from pg_enum", async () => {
    const meta = await call("/v1/meta", { baseUrl: probe.apiUrl });
    expect(meta.status).toBe(200);
    expect(meta.body.collection_schemas.tidesync_test_items.fields.priority).toMatchObject({ type: "tidesync_test_item_priority", enum_values: ["low", "normal", "high"] });
    expect(meta.body.collection_schemas.tidesync_test_items.fields.priorities).toMatchObject({ type: "tidesync_test_item_priority[]", enum_values: ["low", "normal", "high"] });
    expect(meta.body.collection_schemas.tidesync_test_items.fields.label).not.toHaveProperty("enum_values");
    expect(probe.collections.find((c) => c.name === "tidesync_test_items")!.fields.find((f) => f.name === "priority")!.enum_values).toEqual(["low", "normal", "high"]);
  });

  it("a value that is not one of them rejects that op with invalid_value on the field, naming the values; one of them is stored", async () => {
    const user = await probe.newUser();
    const ops = [item(user, { priority: "urgent" }), item(user, { priorities: ["low", "HIGH"] }), item(user, { priority: "high", priorities: ["normal", null] })];
    const response = await pushOps(user, ops);
    expect(response.status, response.text).toBe(200);
    const results = response.body.results as { status: string; error?: { details: { field: string; code: string; message: string }[] } }[];
    expect(results.map((r) => [r.status, r.error?.details])).toEqual([
      ["rejected", [{ field: "/ops/0/data/priority", code: "invalid_value", message: 'must be one of "low", "normal", "high"' }]],
      ["rejected", [{ field: "/ops/1/data/priorities/1", code: "invalid_value", message: 'must be one of "low", "normal", "high"' }]],
      ["applied", undefined],
    ]);
    expect(await stored(ops[2].record_id)).toMatchObject({ priority: "high" });
  });
});

describe("bigint columns", () => {
  it("a value past ±(2^53 - 1) gets one detail, not the same one twice", async () => {
    const user = await probe.newUser();
    const response = await pushOps(user, [item(user, { big: 2 ** 53 + 2 }), item(user, { big: -(2 ** 53 + 2) })]);
    expect(response.status, response.text).toBe(200);
    expect(response.body.results.map((r: { error: { details: unknown[] } }) => r.error.details)).toEqual([
      [{ field: "/ops/0/data/big", code: "too_large", message: "at most 9007199254740991" }],
      [{ field: "/ops/1/data/big", code: "too_small", message: "at least -9007199254740991" }],
    ]);
  });
});

describe("numbers a double cannot hold", () => {
  /** One op's JSON text, its data given as JSON text (for numbers JSON.stringify cannot write). */
  const opText = (user: ProbeUser, id: string, data: string) =>
    `{"op_id":"${randomUUID()}","collection":"tidesync_test_items","record_id":"${id}","type":"upsert","base_version":null,"data":{"list_id":"${user.userId}",${data}}}`;

  it("in a jsonb document, a numeric, bigint or integer[] column: that op is rejected (not_exact, at the number), not stored as another number; the rest of the batch applies", async () => {
    const user = await probe.newUser();
    const ids = Array.from({ length: 7 }, () => randomUUID());
    const text = `{"ops":[${[
      opText(user, ids[0], `"doc":{"order_id":12345678901234567,"exact":1.000000000000000000001,"fine":0.1}`),
      opText(user, ids[1], `"amount":123456789012345678901234567890.123456789`),
      opText(user, ids[2], `"big":9007199254740993`),
      opText(user, ids[3], `"counts":[1,2.0000000000000000001]`),
      opText(user, ids[4], `"doc":{"two_to_the_60":1152921504606846976}`),
      opText(user, ids[5], `"doc":{"n":[0.1,1.50,12345678901234568,-0,1e21]},"amount":0.1,"big":9007199254740991`),
      opText(user, ids[6], `"label":12345678901234567`),
    ].join(",")}]}`;
    const response = await pushText(user, text);
    expect(response.status, response.text).toBe(200);
    const results = response.body.results as { status: string; error?: { code: string; details: { field: string; code: string; message: string }[] } }[];
    expect(results.map((r) => [r.status, r.error?.code, r.error?.details.map((d) => [d.field, d.code])])).toEqual([
      ["rejected", "VALIDATION_FAILED", [["/ops/0/data/doc/order_id", "not_exact"], ["/ops/0/data/doc/exact", "not_exact"]]],
      ["rejected", "VALIDATION_FAILED", [["/ops/1/data/amount", "not_exact"]]],
      ["rejected", "VALIDATION_FAILED", [["/ops/2/data/big", "not_exact"]]],
      ["rejected", "VALIDATION_FAILED", [["/ops/3/data/counts/1", "not_exact"]]],
      ["rejected", "VALIDATION_FAILED", [["/ops/4/data/doc/two_to_the_60", "not_exact"]]],
      ["applied", undefined, undefined],
      // A text column says what it wants (a string), not how the number would be read.
      ["rejected", "VALIDATION_FAILED", [["/ops/6/data/label", "invalid_type"]]],
    ]);
    expect(results[0].error!.details[0].message).toMatch(/would be stored as 12345678901234568/);
    for (const id of [...ids.slice(0, 5), ids[6]]) expect(await stored(id)).toBeUndefined();
    expect(await stored(ids[5])).toMatchObject({ doc: '{"n": [0.1, 1.5, 12345678901234568, 0, 1000000000000000000000]}', amount: "0.1", big: "9007199254740991" });
  });

  it("in a numeric(p,s) column, one with more digits after the point than its scale keeps (1e-21 in a numeric(40,20), stored as 0) rejects that op (not_exact), judged on the number sent: 1.50 or 0.1000…0 is its value", async () => {
    const user = await probe.newUser();
    const ids = Array.from({ length: 7 }, () => randomUUID());
    const text = `{"ops":[${[
      opText(user, ids[0], `"tiny":1e-21`),
      opText(user, ids[1], `"tiny":1.5e-20`),
      opText(user, ids[2], `"cents":[1.5,1.005]`),
      opText(user, ids[3], `"hundreds":150`),
      opText(user, ids[4], `"tiny":1e-20,"cents":[1.50,null],"hundreds":-1.2e4`),
      opText(user, ids[5], `"tiny":0.10000000000000000000000,"hundreds":0`),
      opText(user, ids[6], `"amount":1e-21`),
    ].join(",")}]}`;
    const response = await pushText(user, text);
    expect(response.status, response.text).toBe(200);
    const results = response.body.results as { status: string; error?: { details: { field: string; code: string; message: string }[] } }[];
    expect(results.map((r) => [r.status, r.error?.details.map((d) => [d.field, d.code])])).toEqual([
      ["rejected", [["/ops/0/data/tiny", "not_exact"]]],
      ["rejected", [["/ops/1/data/tiny", "not_exact"]]],
      ["rejected", [["/ops/2/data/cents/1", "not_exact"]]],
      ["rejected", [["/ops/3/data/hundreds", "not_exact"]]],
      ["applied", undefined],
      ["applied", undefined],
      ["applied", undefined],
    ]);
    expect(results[0].error!.details[0].message).toBe("has more than 20 digits after the decimal point: a numeric(40,20) would store it rounded");
    const rows = await probe.admin.unsafe(`select id, tiny::text, cents::text, hundreds::text, amount::text from public.tidesync_test_items where id = any($1::uuid[]) order by tiny nulls last`, [ids]);
    expect(rows.map((r) => [r.id, r.tiny, r.cents, r.hundreds, r.amount])).toEqual([
      [ids[4], "0.00000000000000000001", "{1.50,NULL}", "-12000", null],
      [ids[5], "0.10000000000000000000", null, "0", null],
      [ids[6], null, null, null, "0.000000000000000000001"],
    ]);
  });

  it("in a double precision column a number keeps what a double holds, as the column would in SQL: not refused", async () => {
    const user = await probe.newUser();
    const id = randomUUID();
    const response = await pushText(user, `{"ops":[${opText(user, id, `"ratio":0.10000000000000001`)}]}`);
    expect(response.status, response.text).toBe(200);
    expect(response.body.results[0]).toMatchObject({ status: "applied", record: { data: { ratio: 0.1 } } });
    expect(await stored(id)).toMatchObject({ ratio: "0.1" });
  });
});

describe("numbers a double cannot hold, written by SQL", () => {
  /** The JSON text of the record `id` in a pull's or push's answer, Postgres' separators (", ", ": ") written as JSON.stringify writes them. */
  function recordText(text: string, id: string): string {
    const start = text.lastIndexOf("{", text.indexOf(`"id":"${id}"`));
    let depth = 0;
    for (let i = start; i < text.length; i++) {
      if (text[i] === "{") depth++;
      if (text[i] === "}" && --depth === 0) return text.slice(start, i + 1).replaceAll(", ", ",").replaceAll('": ', '":');
    }
    throw new Error(`no record ${id}`);
  }

  async function pulledText(user: ProbeUser, id: string): Promise<string> {
    await settled();
    const response = await call("/v1/sync/changes?collections=tidesync_test_items", { token: user.token, baseUrl: probe.apiUrl });
    expect(response.status, response.text).toBe(200);
    return recordText(response.text, id);
  }

  it("a push answers with them as a pull lists them: applied (the rows read back), conflict and rejected (the rows the batch read)", async () => {
    const user = await probe.newUser();
    const id = randomUUID();
    await probe.admin.unsafe(
      `insert into public.tidesync_test_items (id, list_id, big, amount, doc) values ($1, $2, 9007199254740993, 123456789012345678901234567890.123456789,
         '{"n": 123456789012345678901234567890.123456789, "k": 12345678901234567, "f": 0.1}')`,
      [id, user.userId],
    );
    const before = await pulledText(user, id);
    expect(before).toContain('"big":9007199254740993');
    expect(before).toContain('"amount":123456789012345678901234567890.123456789');
    const version = Number(/"version":(\d+)/.exec(before)![1]);

    // applied: the answer is the record read back after the write.
    const applied = await pushOps(user, [upsert("tidesync_test_items", id, { label: "touched" }, version)]);
    expect(applied.status, applied.text).toBe(200);
    expect(applied.body.results[0].status).toBe("applied");
    const afterPush = await pulledText(user, id);
    expect(recordText(applied.text, id)).toBe(afterPush);
    expect(afterPush).toContain('"doc":{"f":0.1,"k":12345678901234567,"n":123456789012345678901234567890.123456789}');

    // conflict: another writer (SQL) changed big since the op's base; the answer is the record as the batch read it.
    await probe.admin.unsafe(`update public.tidesync_test_items set big = 9007199254740995 where id = $1`, [id]);
    const conflict = await pushOps(user, [upsert("tidesync_test_items", id, { big: 5 }, version)]);
    expect(conflict.body.results[0]).toMatchObject({ status: "conflict", conflicting_fields: ["big"] });
    const current = await pulledText(user, id);
    expect(current).toContain('"big":9007199254740995');
    expect(recordText(conflict.text, id)).toBe(current);

    // rejected: the record as it stands, with the op's own inexact number refused.
    const currentVersion = Number(/"version":(\d+)/.exec(current)![1]);
    const rejected = await pushText(user, `{"ops":[{"op_id":"${randomUUID()}","collection":"tidesync_test_items","record_id":"${id}","type":"upsert","base_version":${currentVersion},"data":{"amount":0.10000000000000001}}]}`);
    expect(rejected.body.results[0]).toMatchObject({ status: "rejected", error: { details: [{ field: "/ops/0/data/amount", code: "not_exact" }] } });
    expect(recordText(rejected.text, id)).toBe(current);
  });
});

describe("what the wire cannot carry (docs/sync.md, column kinds): said, and as said", () => {
  /** The user's records of the probe table as a pull lists them: parsed, and as text. */
  async function pulled(user: ProbeUser): Promise<{ data: Map<string, Record<string, unknown> | null>; text: string }> {
    await settled();
    const response = await call("/v1/sync/changes?collections=tidesync_test_items", { token: user.token, baseUrl: probe.apiUrl });
    expect(response.status, response.text).toBe(200);
    return { data: new Map(response.body.changes.map((c: { id: string; data: Record<string, unknown> | null }) => [c.id, c.data])), text: response.text };
  }

  it("a jsonb column's JSON null and SQL NULL are one null: SQL's 'null'::jsonb is pulled as null, and a push of null stores SQL NULL", async () => {
    const user = await probe.newUser();
    const [jsonNull, sqlNull] = [randomUUID(), randomUUID()];
    await probe.admin.unsafe(`insert into public.tidesync_test_items (id, list_id, doc) values ($1, $3, 'null'::jsonb), ($2, $3, null)`, [jsonNull, sqlNull, user.userId]);
    const { data } = await pulled(user);
    expect([data.get(jsonNull)?.doc, data.get(sqlNull)?.doc]).toEqual([null, null]);
    const pushed = item(user, { doc: null });
    expect((await pushOps(user, [pushed])).body.results[0]).toMatchObject({ status: "applied", record: { data: { doc: null } } });
    const [row] = await probe.admin.unsafe(`select doc is null as sql_null from public.tidesync_test_items where id = $1`, [pushed.record_id]);
    expect(row.sql_null).toBe(true);
  });

  it("a bigint past 2^53 cannot be pushed (a number is not_exact, a string invalid_type), nor into a numeric; a text column keeps it; SQL's is pulled with all its digits", async () => {
    const user = await probe.newUser();
    const ids = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
    const op = (id: string, data: string) =>
      `{"op_id":"${randomUUID()}","collection":"tidesync_test_items","record_id":"${id}","type":"upsert","base_version":null,"data":{"list_id":"${user.userId}",${data}}}`;
    const response = await pushText(user, `{"ops":[${[
      op(ids[0], `"big":9007199254740993`), op(ids[1], `"big":"9007199254740993"`), op(ids[2], `"amount":9007199254740993`), op(ids[3], `"label":"9007199254740993"`),
    ].join(",")}]}`);
    expect(response.status, response.text).toBe(200);
    expect(response.body.results.map((r: { status: string; error?: { details: { field: string; code: string }[] } }) => [r.status, r.error?.details.map((d) => [d.field, d.code])])).toEqual([
      ["rejected", [["/ops/0/data/big", "not_exact"]]],
      ["rejected", [["/ops/1/data/big", "invalid_type"]]],
      ["rejected", [["/ops/2/data/amount", "not_exact"]]],
      ["applied", undefined],
    ]);
    expect(await stored(ids[3])).toMatchObject({ big: null });
    const [row] = await probe.admin.unsafe(`select label from public.tidesync_test_items where id = $1`, [ids[3]]);
    expect(row.label).toBe("9007199254740993");
    const written = randomUUID();
    await probe.admin.unsafe(`insert into public.tidesync_test_items (id, list_id, big) values ($1, $2, 9007199254740993)`, [written, user.userId]);
    expect((await pulled(user)).text).toContain('"big":9007199254740993');
  });

  it("-0 pushed into a double precision column is stored as 0; SQL's -0 is kept, and pulled as -0", async () => {
    const user = await probe.newUser();
    const [pushedZero, pushedZeroPoint, written] = [randomUUID(), randomUUID(), randomUUID()];
    const op = (id: string, literal: string) =>
      `{"op_id":"${randomUUID()}","collection":"tidesync_test_items","record_id":"${id}","type":"upsert","base_version":null,"data":{"list_id":"${user.userId}","ratio":${literal}}}`;
    const response = await pushText(user, `{"ops":[${op(pushedZero, "-0")},${op(pushedZeroPoint, "-0.0")}]}`);
    expect(response.body.results.map((r: { status: string }) => r.status)).toEqual(["applied", "applied"]);
    expect([(await stored(pushedZero))?.ratio, (await stored(pushedZeroPoint))?.ratio]).toEqual(["0", "0"]);
    await probe.admin.unsafe(`insert into public.tidesync_test_items (id, list_id, ratio) values ($1, $2, '-0')`, [written, user.userId]);
    expect((await stored(written))?.ratio).toBe("-0");
    const { data } = await pulled(user);
    expect(Object.is(data.get(written)?.ratio, -0)).toBe(true);
    expect(Object.is(data.get(pushedZero)?.ratio, 0)).toBe(true);
  });
});

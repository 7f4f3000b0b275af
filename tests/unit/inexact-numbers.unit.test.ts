// Numbers JSON.parse cannot hold exactly (functions/_shared/inexact-numbers.ts):
// a push refuses them in an op's data where the column would store another
// number than the client sent (a jsonb document, numeric, bigint), and the
// cheap test on the body's text must never miss one nor cost a body without
// one more than a scan. What a user would notice: 12345678901234567 stored as
// 12345678901234568 without a word, or a JavaScript client's own numbers
// refused. Through the real function: tests/integration/column-values.test.ts.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { fractionDigits, inexactNumberAt, inexactNumbersIn, isInexactNumberLiteral, mayHoldInexactNumber } from "../../functions/_shared/inexact-numbers.ts";
import { longNumberLiterals } from "../../functions/_shared/long-number-literals.ts";
import { inexactNumbersOfOps } from "../../functions/api/sync/inexact-op-numbers.ts";
import { planBatch, recordKey } from "../../functions/api/sync/plan-batch.ts";
import { syncBatchRequestSchema } from "../../functions/_shared/schemas/sync.ts";

describe("fractionDigits: the digits after the point a numeric(p,s) column must keep", () => {
  it.each([
    ["1e-21", 21], ["-1e-21", 21], ["1.5e-20", 21], ["1.50", 1], ["0.10000000000000000000000", 1], ["150", -1], ["-1.2e4", -3],
    ["1e+21", -21], ["12", 0], ["0.001", 3], ["-0.001", 3],
  ])("%s has %i", (literal, digits) => {
    expect(fractionDigits(literal)).toBe(digits);
  });

  it("zero has none, whatever its spelling", () => {
    for (const literal of ["0", "-0", "0.000", "0e5"]) expect(fractionDigits(literal), literal).toBe(-Infinity);
  });

  it("the double's shortest text says the same as any exact literal of it", () => {
    fc.assert(fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (value) => {
      expect(fractionDigits(String(value))).toBe(fractionDigits(value.toExponential().replace("e+", "e")));
    }));
  });
});

describe("isInexactNumberLiteral: the double JSON.parse reads is written back as another number", () => {
  it.each([
    ["12345678901234567", true],
    ["-12345678901234567", true],
    ["9007199254740993", true],
    ["1.000000000000000000001", true],
    ["123456789012345678901234567890.123456789", true],
    ["0.10000000000000001", true], // a double holds it as 0.1, which is what would be stored
    ["1e-400", true], // read as 0
    ["1152921504606846976", true], // 2^60, a double, but written back as 1152921504606847000
    ["1.23456789e-320", true], // a subnormal double keeps fewer digits
    ["9007199254740992", false],
    ["12345678901234568", false],
    ["0.1", false],
    ["0.30000000000000004", false],
    ["1.50", false],
    ["15e-1", false],
    ["1152921504606847000", false],
    ["1e21", false],
    ["1E+21", false],
    ["5e-324", false],
    ["-0", false],
    ["0.000", false],
    ["1e309", false], // not finite: not_finite's (non-finite-numbers.ts)
  ])("%s → %s", (literal, inexact) => {
    expect(isInexactNumberLiteral(literal)).toBe(inexact);
  });

  it("whatever double a JavaScript client holds, JSON.stringify writes it exactly: its bodies never trip the check", () => {
    fc.assert(fc.property(fc.array(fc.double({ noNaN: true, noDefaultInfinity: true })), (values) => {
      const text = JSON.stringify({ ops: [{ data: { values, one: values[0] ?? 0 } }] });
      expect(values.filter((v) => isInexactNumberLiteral(JSON.stringify(v)))).toEqual([]);
      expect(mayHoldInexactNumber(text)).toBe(false);
    }), { numRuns: 300 });
  });

  it("a literal of at most 15 significant digits and a two-digit exponent is exact (why the cheap test may skip them)", () => {
    const literal = fc.tuple(fc.boolean(), fc.stringMatching(/^[1-9]\d{0,14}$/), fc.integer({ min: 0, max: 14 }), fc.integer({ min: -99, max: 99 }))
      .map(([negative, digits, point, exponent]) => {
        const at = Math.min(point, digits.length);
        const mantissa = at > 0 && at < digits.length ? `${digits.slice(0, at)}.${digits.slice(at)}` : digits;
        return `${negative ? "-" : ""}${mantissa}e${exponent}`;
      });
    fc.assert(fc.property(literal, (text) => !isInexactNumberLiteral(text)), { numRuns: 2000 });
  });
});

describe("longNumberLiterals: the one scan both number rules share", () => {
  it("finds every literal of 16 digits or more (15 with a point) or a three-digit exponent, wherever a value starts, and no other", () => {
    expect(longNumberLiterals("12345678901234567")).toEqual(["12345678901234567"]);
    expect(longNumberLiterals(' \n -1e-400')).toEqual(["-1e-400"]);
    expect(longNumberLiterals('{"a":[1, 1234567890123456,\t-0.12345678901234,{"b": 1e+309}],"c":123456789012345,"d":1.5e99}'))
      .toEqual(["1234567890123456", "-0.12345678901234", "1e+309"]);
    // Hex digits of uuids, timestamps, text that merely looks like numbers.
    expect(longNumberLiterals('{"id":"9e123e45-1e99-4e00-8e71-123456789abc","t":"2026-11-26T10:00:00.123456Z","s":"a:.................-x"}')).toEqual([]);
    expect(longNumberLiterals('{"s":"x: 12345678901234567"}')).toEqual(["12345678901234567"]); // conservative inside strings
  });
});

/** A JSON text of nested objects and arrays whose numbers are these literals, some of them inside strings. */
const bodies = fc.array(fc.oneof(
  fc.stringMatching(/^-?[1-9]\d{0,24}(\.\d{1,25})?([eE][+-]?\d{1,3})?$/),
  fc.constantFrom("12345678901234567", "1.000000000000000000001", "0.1", "9007199254740993", "1e-400", "42"),
), { minLength: 1, maxLength: 8 }).chain((literals) => fc.tuple(
  fc.constant(literals),
  fc.array(fc.constantFrom("object", "array", "string"), { minLength: literals.length, maxLength: literals.length }),
)).map(([literals, wraps]) => {
  const items = literals.map((literal, i) =>
    wraps[i] === "object" ? `{"k\\"${i}": ${literal}}` : wraps[i] === "array" ? `[0, [${literal}]]` : JSON.stringify(`: ${literal}, [${literal}`)
  );
  return { literals, wraps, text: `{"a":[${items.join(",")}],"z":{"s":"]\\\\"}}` };
});

describe("mayHoldInexactNumber and inexactNumbersIn: the cheap test never misses, the walk says where", () => {
  it("the test is true exactly when the walk finds an inexact number, and the walk finds exactly the inexact numbers outside strings, at their paths", () => {
    fc.assert(fc.property(bodies, ({ literals, wraps, text }) => {
      const parsed = JSON.parse(text);
      const found = inexactNumbersIn(text);
      const expected = literals.flatMap((literal, i) => {
        if (wraps[i] === "string" || !isInexactNumberLiteral(literal)) return [];
        return [{ path: wraps[i] === "object" ? ["a", i, `k"${i}`] : ["a", i, 1, 0], literal }];
      });
      expect(found).toEqual(expected);
      expect(mayHoldInexactNumber(text)).toBe(expected.length > 0 || literals.some((l, i) => wraps[i] === "string" && isInexactNumberLiteral(l)));
      for (const f of found) expect(inexactNumberAt(parsed, f)).not.toBeNull();
    }), { numRuns: 1000 });
  });

  it("a key named twice: the number JSON.parse kept is the one checked", () => {
    const text = '{"a": 12345678901234567, "a": 1, "b": [12345678901234567]}';
    const found = inexactNumbersIn(text);
    expect(found.map((f) => inexactNumberAt(JSON.parse(text), f))).toEqual([null, "/b/0"]);
  });

  it("inexactNumbersOfOps: per op index, paths from its data; numbers outside an op's data are not its (the envelope's schema judges them)", () => {
    const text = `{"ops":[{"op_id":"x","base_version":12345678901234567,"data":{"n":1}},` +
      `{"data":{"doc":{"order_id":12345678901234567,"exact":1.000000000000000000001,"ok":0.1},"list":[1,2.0000000000000000001]}}]}`;
    expect(Object.fromEntries(inexactNumbersOfOps(inexactNumbersIn(text)))).toEqual({
      1: [
        { path: ["doc", "order_id"], literal: "12345678901234567" },
        { path: ["doc", "exact"], literal: "1.000000000000000000001" },
        { path: ["list", 1], literal: "2.0000000000000000001" },
      ],
    });
    expect(inexactNumbersOfOps(inexactNumbersIn(JSON.stringify({ ops: [{ data: { position: 0.30000000000000004, big: 2 ** 60 } }] }))).size).toBe(0);
  });
});

describe("planBatch with the sample tables (no column there stores a number exactly)", () => {
  const LIST = "00000000-0000-4000-8000-00000000a11c";
  const list = { collection: "lists", id: LIST, version: 1, deleted: false, data: { title: "L" }, field_versions: { "*": { v: 1, d: null } }, created_at: "2026-11-26T00:00:00Z", updated_at: "2026-11-26T00:00:00Z", deleted_at: null };
  const state = { liveRecords: 0, ledger: new Map(), records: new Map([[recordKey("lists", LIST), list]]), writable: new Set([recordKey("lists", LIST)]) };

  it("a double precision column keeps what a double holds (applied as read), and a text column refuses a number as the wrong type, not as inexact", () => {
    const text = `{"ops":[` +
      `{"op_id":"00000000-0000-4000-8000-000000000001","collection":"tasks","record_id":"00000000-0000-4000-8000-000000000011","type":"upsert","base_version":null,"data":{"list_id":"${LIST}","title":"t","position":0.10000000000000001}},` +
      `{"op_id":"00000000-0000-4000-8000-000000000002","collection":"tasks","record_id":"00000000-0000-4000-8000-000000000012","type":"upsert","base_version":null,"data":{"list_id":"${LIST}","title":12345678901234567}}]}`;
    const inexact = inexactNumbersOfOps(inexactNumbersIn(text));
    expect([...inexact.keys()]).toEqual([0, 1]);
    const plan = planBatch(syncBatchRequestSchema.parse(JSON.parse(text)).ops, null, state, { max_record_data_bytes: 65536, max_live_records_per_user: 10 }, "2026-11-26T00:00:00.000000Z", inexact);
    expect(plan.ops.map((p) => [p.result.status, p.result.error?.details?.map((d) => d.code)])).toEqual([["applied", undefined], ["rejected", ["invalid_type"]]]);
    expect(plan.ops[0].result.record!.data).toMatchObject({ position: 0.1 });
  });
});

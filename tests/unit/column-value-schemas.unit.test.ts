// The push's validation of column types the sample app does not have (json,
// jsonb, arrays, enums, numeric, bigint), built by fieldValueSchema/schemaFor
// from a table's generated fields, as the server and the client build it
// (client/collection-catalog.ts: from GET /v1/meta). What a user would notice:
// an op's value refused with a detail they can act on, instead of a 500 for
// the whole batch, a crash of the client's local check, or a value stored as
// something other than what was sent. Through the real function:
// tests/integration/column-values.test.ts.
import { describe, expect, it } from "vitest";
import { CollectionCatalog } from "../../client/collection-catalog.ts";
import { fieldValueSchema, printsLongNumbers, schemaFor, storesExactNumbers } from "../../functions/_shared/collections.ts";
import { isPortablePattern } from "../../functions/_shared/portable-pattern.ts";
import { metaResponseSchema } from "../../functions/_shared/schemas/meta.ts";
import { jsonValueProblems } from "../../functions/_shared/json-value.ts";
import { MAX_JSON_DEPTH } from "../../functions/_shared/limits.ts";
import type { GeneratedField } from "../../functions/_shared/sync-collection-types.ts";
import { zodIssuesToDetails } from "../../functions/_shared/validation-details.ts";

const field = (name: string, type: string, extra: Partial<GeneratedField> = {}): GeneratedField => ({
  name, type, nullable: true, has_default: false, insertable: true, updatable: true, ...extra,
});

const ITEMS: GeneratedField[] = [
  field("doc", "jsonb"),
  field("raw", "json"),
  field("addr", "inet"),
];

/** The op's details as the push answers them ([pointer, code]), or [] when the data is accepted. */
function details(fields: GeneratedField[], data: Record<string, unknown>, mode: "create" | "update" = "update"): [string, string][] {
  const parsed = schemaFor({ fields }, mode).safeParse(data);
  return parsed.success ? [] : zodIssuesToDetails(parsed.error.issues, data, ["ops", 0, "data"]).map((d) => [d.field, d.code]);
}

/** An array nested `depth` deep around `inner`. */
function nest(depth: number, inner: unknown = null): unknown {
  let value: unknown = inner;
  for (let i = 0; i < depth; i++) value = [value];
  return value;
}

describe("json and jsonb values (and types with no schema of their own)", () => {
  it("a NUL or an unpaired surrogate in a string (or an object key) is invalid_characters at its pointer (the object's), at any depth", () => {
    expect(details(ITEMS, { doc: { a: ["x\u0000y"] } })).toEqual([["/ops/0/data/doc/a/0", "invalid_characters"]]);
    expect(details(ITEMS, { doc: { "k\uD800": 1 } })).toEqual([["/ops/0/data/doc", "invalid_characters"]]);
    expect(details(ITEMS, { raw: "\uDC00" })).toEqual([["/ops/0/data/raw", "invalid_characters"]]);
    expect(details(ITEMS, { addr: "10.0.0.1\u0000" })).toEqual([["/ops/0/data/addr", "invalid_characters"]]);
    expect(details(ITEMS, { doc: nest(10, { deep: "\u0000" }) })).toEqual([["/ops/0/data/doc" + "/0".repeat(10) + "/deep", "invalid_characters"]]);
    // A pair is one character: stored fine.
    expect(details(ITEMS, { doc: { "🦀": "🦀", s: "\uD83E\uDD80" } })).toEqual([]);
  });

  it("reports problems in document order, several per value", () => {
    expect(details(ITEMS, { doc: { a: "\u0000", "b\u0000": 1, c: [1, "\uD800"] } })).toEqual([
      ["/ops/0/data/doc/a", "invalid_characters"],
      ["/ops/0/data/doc", "invalid_characters"],
      ["/ops/0/data/doc/c/1", "invalid_characters"],
    ]);
    // One for the object, however many of its keys cannot be stored.
    expect(details(ITEMS, { doc: { "a\u0000": 1, b: { "\uD800": 1, "\uDC00": 2 }, "c\u0000": [] } })).toEqual([
      ["/ops/0/data/doc", "invalid_characters"],
      ["/ops/0/data/doc/b", "invalid_characters"],
    ]);
  });

  it(`nests at most ${MAX_JSON_DEPTH} deep: deeper is too_deep at the first container past the limit, found without recursion (3,000 and 100,000 deep)`, () => {
    expect(details(ITEMS, { doc: nest(MAX_JSON_DEPTH) })).toEqual([]);
    expect(details(ITEMS, { doc: nest(MAX_JSON_DEPTH, {}) })).toEqual([["/ops/0/data/doc" + "/0".repeat(MAX_JSON_DEPTH), "too_deep"]]);
    expect(details(ITEMS, { doc: nest(MAX_JSON_DEPTH + 1) })).toEqual([["/ops/0/data/doc" + "/0".repeat(MAX_JSON_DEPTH), "too_deep"]]);
    for (const depth of [3000, 100_000]) {
      const deep = JSON.parse("[".repeat(depth) + "]".repeat(depth));
      expect(details(ITEMS, { doc: deep })).toEqual([["/ops/0/data/doc" + "/0".repeat(MAX_JSON_DEPTH), "too_deep"]]);
      const object = JSON.parse('{"a":'.repeat(depth) + "1" + "}".repeat(depth));
      expect(details(ITEMS, { raw: object })).toEqual([["/ops/0/data/raw" + "/a".repeat(MAX_JSON_DEPTH), "too_deep"]]);
    }
  });

  it("the client's local check (the same schemas, from GET /v1/meta) refuses the same values, and does not run out of stack", () => {
    const catalog = new CollectionCatalog({ collections: ["items"], collection_schemas: { items: { scope: "list_id", fields: Object.fromEntries(ITEMS.map(({ name, ...spec }) => [name, spec])) } } });
    const deep = JSON.parse("[".repeat(3000) + "]".repeat(3000));
    expect(() => catalog.check("items", { doc: deep }, false)).toThrow(expect.objectContaining({ details: [expect.objectContaining({ field: "/data/doc" + "/0".repeat(MAX_JSON_DEPTH), code: "too_deep" })] }));
    expect(() => catalog.check("items", { doc: { k: "\u0000" } }, false)).toThrow(expect.objectContaining({ details: [expect.objectContaining({ field: "/data/doc/k", code: "invalid_characters" })] }));
    expect(catalog.check("items", { doc: { k: [1, "two", null, true] } }, false)).toEqual({ doc: { k: [1, "two", null, true] } });
  });

  it("takes any other JSON as it is; a required json column left out of a create is required; what JSON cannot carry is refused", () => {
    const doc = { a: [1, 2.5, "x", null, true, { b: {} }], "": "" };
    expect(fieldValueSchema(field("doc", "jsonb")).parse(doc)).toBe(doc);
    expect(details([field("doc", "jsonb", { nullable: false })], {}, "create")).toEqual([["/ops/0/data/doc", "required"]]);
    expect(details(ITEMS, { doc: { n: Number.NaN } })).toEqual([["/ops/0/data/doc/n", "not_finite"]]);
    expect(details(ITEMS, { doc: { d: new Date(0) } })).toEqual([["/ops/0/data/doc/d", "invalid_type"]]);
    // An undefined property is what JSON.stringify leaves out: not a problem.
    expect(jsonValueProblems({ a: undefined, b: [undefined] }).map((p) => [p.path, p.code])).toEqual([[["b", 0], "invalid_type"]]);
  });
});

describe("array columns: each element as a column of the element type", () => {
  const ARRAYS = [
    field("tags", "text[]"),
    field("counts", "integer[]"),
    field("ids", "uuid[]"),
    field("codes", "character varying(8)[]"),
    field("docs", "jsonb[]"),
    field("required_tags", "text[]", { nullable: false }),
  ];
  const UPPER = "E621E1F8-C36C-495A-93FC-0C247A3E6E5F";

  it("an element not of the element type is refused at its index: an object or a number in text[], a string or a fraction in integer[]", () => {
    expect(details(ARRAYS, { tags: [{ a: 1 }] })).toEqual([["/ops/0/data/tags/0", "invalid_type"]]);
    expect(details(ARRAYS, { tags: ["a", 1, true] })).toEqual([["/ops/0/data/tags/1", "invalid_type"], ["/ops/0/data/tags/2", "invalid_type"]]);
    expect(details(ARRAYS, { counts: ["1", 1.5, 2 ** 31] })).toEqual([
      ["/ops/0/data/counts/0", "invalid_type"],
      ["/ops/0/data/counts/1", "invalid_type"],
      ["/ops/0/data/counts/2", "too_large"],
    ]);
    expect(details(ARRAYS, { ids: ["not a uuid"] })).toEqual([["/ops/0/data/ids/0", "invalid_format"]]);
    expect(details(ARRAYS, { tags: "a", counts: { 0: 1 } })).toEqual([["/ops/0/data/tags", "invalid_type"], ["/ops/0/data/counts", "invalid_type"]]);
    expect(details(ARRAYS, { required_tags: null })).toEqual([["/ops/0/data/required_tags", "invalid_type"]]);
    expect(details(ARRAYS, { tags: ["a"] }, "create")).toEqual([["/ops/0/data/required_tags", "required"]]);
  });

  it("takes elements of the element type and nulls, empty and multidimensional arrays; elements are normalised as their column would be (uuids lower-cased)", () => {
    const schema = schemaFor({ fields: ARRAYS }, "update");
    expect(schema.parse({ tags: ["a", null, ""], counts: [], codes: ["x"], docs: [{ a: [1] }, null, "s"] }))
      .toEqual({ tags: ["a", null, ""], counts: [], codes: ["x"], docs: [{ a: [1] }, null, "s"] });
    expect(schema.parse({ counts: [[1, 2], [3, null]], ids: [UPPER, null] })).toEqual({ counts: [[1, 2], [3, null]], ids: [UPPER.toLowerCase(), null] });
    expect(schema.parse({ tags: [[["a"]]] })).toEqual({ tags: [[["a"]]] });
  });

  it("a multidimensional array holds arrays throughout, and elements only at its innermost level", () => {
    expect(details(ARRAYS, { counts: [[1], 2] })).toEqual([["/ops/0/data/counts/1", "invalid_type"]]);
    expect(details(ARRAYS, { counts: [[1, [2]]] })).toEqual([["/ops/0/data/counts/0/1", "invalid_type"]]);
    // Postgres has at most 6 dimensions: a 7th level is no element of integer[].
    expect(details(ARRAYS, { counts: nest(7, 1) })).toEqual([["/ops/0/data/counts" + "/0".repeat(6), "invalid_type"]]);
    expect(details(ARRAYS, { counts: JSON.parse("[".repeat(3000) + "]".repeat(3000)) })).toEqual([["/ops/0/data/counts" + "/0".repeat(6), "invalid_type"]]);
  });
});

describe("enum columns: one of the enum's labels (enum_values, from pg_enum)", () => {
  const LEVELS = ["low", "normal", "high"];
  const ENUMS = [field("priority", "item_priority", { enum_values: LEVELS }), field("priorities", "item_priority[]", { enum_values: LEVELS })];

  it("a value that is not a label is invalid_value, naming the labels; in an array, at the element", () => {
    expect(details(ENUMS, { priority: "urgent" })).toEqual([["/ops/0/data/priority", "invalid_value"]]);
    expect(details(ENUMS, { priority: "LOW", priorities: ["low", "x"] })).toEqual([["/ops/0/data/priority", "invalid_value"], ["/ops/0/data/priorities/1", "invalid_value"]]);
    expect(details(ENUMS, { priority: 1 })).toEqual([["/ops/0/data/priority", "invalid_value"]]);
    const parsed = schemaFor({ fields: ENUMS }, "update").safeParse({ priority: "urgent" });
    expect(zodIssuesToDetails(parsed.error!.issues, { priority: "urgent" })[0].message).toBe('must be one of "low", "normal", "high"');
    expect(schemaFor({ fields: ENUMS }, "update").parse({ priority: "high", priorities: ["low", null] })).toEqual({ priority: "high", priorities: ["low", null] });
  });

  it("the client checks the same labels, as GET /v1/meta publishes them (they survive the client's parse of the answer)", () => {
    const meta = metaResponseSchema.parse({
      api_version: "1", server_time: "2026-11-26T00:00:00Z",
      limits: { max_body_bytes: 1, max_ops_per_batch: 1, max_record_data_bytes: 1, default_pull_limit: 1, max_pull_limit: 1, max_collections_per_pull: 1, max_live_records_per_user: 1, retention_days: 1 },
      collections: ["items"],
      collection_schemas: { items: { scope: "list_id", fields: Object.fromEntries(ENUMS.map(({ name, ...spec }) => [name, spec])) } },
    });
    expect(meta.collection_schemas.items.fields.priority.enum_values).toEqual(LEVELS);
    const catalog = new CollectionCatalog(meta);
    expect(() => catalog.check("items", { priority: "urgent" }, false)).toThrow(expect.objectContaining({ details: [expect.objectContaining({ field: "/data/priority", code: "invalid_value" })] }));
    expect(catalog.check("items", { priority: "low" }, false)).toEqual({ priority: "low" });
  });
});

describe("integer columns: one detail per fault", () => {
  const INTS = [field("big", "bigint"), field("count", "integer"), field("small", "smallint")];

  it("a value past the column's range and past ±(2^53 - 1) gets the column's bound once; a fraction is invalid_type", () => {
    const messages = (data: Record<string, unknown>) => {
      const parsed = schemaFor({ fields: INTS }, "update").safeParse(data);
      return parsed.success ? [] : zodIssuesToDetails(parsed.error.issues, data).map((d) => [d.field, d.code, d.message]);
    };
    expect(messages({ big: 2 ** 53 + 2 })).toEqual([["/big", "too_large", "at most 9007199254740991"]]);
    expect(messages({ big: -(2 ** 53 + 2) })).toEqual([["/big", "too_small", "at least -9007199254740991"]]);
    expect(messages({ count: 2 ** 53 + 2 })).toEqual([["/count", "too_large", "at most 2147483647"]]);
    expect(messages({ small: -(2 ** 60) })).toEqual([["/small", "too_small", "at least -32768"]]);
    expect(messages({ count: 1.5, big: 2 ** 53 - 1, small: 32767 })).toEqual([["/count", "invalid_type", "must be int"]]);
  });
});

describe("dates and instants the wire carries back", () => {
  const TIMES = [field("due", "date"), field("at", "timestamp with time zone")];

  it("refuses an instant Postgres would store past 9999 or before 0001 in UTC, which a pull prints as no client reads", () => {
    // 9999-12-31T23:59:59-14:00 is 10000-01-01T13:59:59Z: stored, then pulled as "10000-01-01T13:59:59+00:00".
    expect(details(TIMES, { at: "9999-12-31T23:59:59-14:00" })).toEqual([["/ops/0/data/at", "out_of_range"]]);
    expect(details(TIMES, { at: "0001-01-01T00:00:00+01:00" })).toEqual([["/ops/0/data/at", "out_of_range"]]);
    // What is not an ISO-8601 instant at all gets that one detail, not a second one for its range.
    expect(details(TIMES, { at: "10000-01-01T13:59:59+00:00" })).toEqual([["/ops/0/data/at", "invalid_format"]]);
  });

  it("says which form a date or an instant takes (zod's own message named only the standard)", () => {
    const messages = (data: Record<string, unknown>) => {
      const parsed = schemaFor({ fields: [...TIMES, field("local", "timestamp without time zone")] }, "update").safeParse(data);
      return parsed.success ? [] : zodIssuesToDetails(parsed.error.issues, data, ["ops", 0, "data"]).map((d) => [d.field, d.code, d.message]);
    };
    expect(messages({ due: "29.11.2026" })).toEqual([["/ops/0/data/due", "invalid_format", "must be a date, YYYY-MM-DD"]]);
    expect(messages({ at: "2026-11-29T10:00:00" })).toEqual([["/ops/0/data/at", "invalid_format", expect.stringMatching(/^must be an ISO 8601 instant with its offset, .*Z or ±HH:MM$/)]]);
    expect(messages({ local: "2026-11-29" })).toEqual([["/ops/0/data/local", "invalid_format", expect.stringMatching(/^must be an ISO 8601 date and time without offset, YYYY-MM-DDTHH:MM/)]]);
  });

  it("accepts the first and last instants of the range, with any offset that keeps them inside", () => {
    for (const at of ["0001-01-01T00:00:00Z", "0001-01-01T00:00:00-01:00", "9999-12-31T23:59:59.999999Z", "9999-12-31T23:59:59.9999990Z", "9999-12-31T22:59:59-01:00"]) {
      expect(details(TIMES, { at }), at).toEqual([]);
    }
  });

  it("refuses a second's digits past those the column keeps (not_exact: it would round them, .9999999 into the next day), and takes zeros there", () => {
    const KEPT = [...TIMES, field("at3", "timestamp(3) with time zone"), field("local", "timestamp without time zone"),
      field("clock", "time without time zone"), field("clock0", "time(0) without time zone"), field("ats", "timestamp with time zone[]"),
      field("due_at", "app_instant", { base_type: "timestamp(2) with time zone" })];
    for (const [name, value] of [
      ["at", "2026-01-01T00:00:00.1234567Z"], ["at", "2026-01-01T23:59:59.9999999Z"], ["at", "9999-12-31T23:59:59.9999995Z"],
      ["at3", "2026-01-01T00:00:00.1234Z"], ["local", "2026-01-01T00:00:00.0000001"], ["clock", "23:59:59.9999999"],
      ["clock0", "10:00:00.5"], ["due_at", "2026-01-01T00:00:00.125+01:00"],
    ] as const) {
      expect(details(KEPT, { [name]: value }), value).toEqual([[`/ops/0/data/${name}`, "not_exact"]]);
    }
    expect(details(KEPT, { ats: ["2026-01-01T00:00:00Z", "2026-01-01T00:00:00.1234567Z"] })).toEqual([["/ops/0/data/ats/1", "not_exact"]]);
    expect(details(KEPT, {
      at: "2026-01-01T00:00:00.1234560Z", at3: "2026-01-01T00:00:00.123000+05:30", local: "2026-01-01T00:00:00.123456000",
      clock: "23:59:59.999999", clock0: "10:00:00.000", ats: ["2026-01-01T00:00:00.1Z"], due_at: "2026-01-01T00:00:00.12Z",
    })).toEqual([]);
  });

  it("a time with time zone (and an array of them) is held to the same rule: Postgres keeps microseconds of it too", () => {
    const ZONED = [field("clock", "time with time zone"), field("clock3", "time(3) with time zone"), field("clocks", "time with time zone[]")];
    for (const [name, value] of [["clock", "10:00:00.1234567+05:30"], ["clock", "23:59:59.9999999Z"], ["clock3", "10:00:00.0005-01"]] as const) {
      expect(details(ZONED, { [name]: value }), value).toEqual([[`/ops/0/data/${name}`, "not_exact"]]);
    }
    expect(details(ZONED, { clocks: ["10:00:00+00", null, "10:00:00.00000001+00"] })).toEqual([["/ops/0/data/clocks/2", "not_exact"]]);
    expect(details(ZONED, { clock: "10:00:00.123456000+05:30", clock3: "10:00:00.1230-01", clocks: ["23:59:59.999999+00"] })).toEqual([]);
  });

  it("says what Postgres keeps: microseconds, or the column's declared digits", () => {
    const messages = (fields: GeneratedField[], data: Record<string, unknown>) => {
      const parsed = schemaFor({ fields }, "update").safeParse(data);
      return parsed.success ? [] : zodIssuesToDetails(parsed.error.issues, data).map((d) => d.message);
    };
    expect(messages([field("at", "timestamp with time zone")], { at: "2026-01-01T00:00:00.1234567Z" }))
      .toEqual(["has more than 6 digits of a second: Postgres keeps microseconds, and would store it rounded"]);
    expect(messages([field("at", "timestamp(3) without time zone")], { at: "2026-01-01T00:00:00.1234" }))
      .toEqual(["has more than 3 digits of a second: its column keeps 3 (timestamp(3) without time zone), and Postgres would store it rounded"]);
  });

  it("refuses the year 0000 in a date, which Postgres does not read", () => {
    expect(details(TIMES, { due: "0000-01-01" })).toEqual([["/ops/0/data/due", "out_of_range"]]);
    expect(details(TIMES, { due: "0001-01-01" })).toEqual([]);
    expect(details(TIMES, { due: "9999-12-31" })).toEqual([]);
  });
});

describe("pattern checks: only a pattern that means the same in Postgres and JavaScript is tested here", () => {
  const text = (pattern: string) => field("code", "text", { pattern });

  it("a Postgres-only pattern (one JavaScript cannot even compile) builds a schema that leaves the value to the database, on the server and in the client's catalog", () => {
    for (const pattern of ["(?i)^[a-z0-9-]+$", "^[[:upper:]]{3}$", "^\\w+\\M", "\\mword\\M", "\\yx\\Y", "\\Aab\\Z", "(a)\\1", "^.+$", "^\\d+$", "***=a.b"]) {
      expect(() => fieldValueSchema(text(pattern)), pattern).not.toThrow();
      expect(details([text(pattern)], { code: "ABC-def\n" }), pattern).toEqual([]);
    }
    const catalog = new CollectionCatalog({ collections: ["tags"], collection_schemas: { tags: { scope: "list_id", fields: { slug: { type: "text", nullable: true, has_default: false, insertable: true, updatable: true, pattern: "(?i)^[a-z]+$" } } } } });
    expect(catalog.check("tags", { slug: "ABC" }, false)).toEqual({ slug: "ABC" });
  });

  it("a portable pattern refuses what the database would refuse (invalid_format), counting characters as code points", () => {
    expect(details([text("^#[0-9a-fA-F]{6}$")], { code: "#12345g" })).toEqual([["/ops/0/data/code", "invalid_format"]]);
    expect(details([text("^#[0-9a-fA-F]{6}$")], { code: "#12345f" })).toEqual([]);
    expect(details([text("^[^@]{1}$")], { code: "🦀" })).toEqual([]);
    expect(details([text("^(ab|cd)+\\.x?$")], { code: "abcd." })).toEqual([]);
    expect(details([text("^(?:ab|cd)+\\.x?$")], { code: "abc." })).toEqual([["/ops/0/data/code", "invalid_format"]]);
  });

  it("a pattern JavaScript's backtracking RegExp could spend seconds or for ever on (repetitions that overlap or nest, long tries at every position) is left to the database, on the server and in the client's catalog", () => {
    const hostile = [
      "^([a-z]+)+$", "^(a|ab)*$", "^[a-z]*[a-z]*[a-z]*[a-z]*x$", "^(a|aa)*$", "^(a|a)*$", "^([a-z]*)*$", "^(a+)*b$", "^(a?)+$", "^(a|)+$",
      "^[^@]+@[^@]+\\.[^@]+$", "^a*(|b)a*$", "^a*(b|)a*$", "^(a|aa){100}$", "^(x[a-z]*)*x$", "^(|)*$",
      "[a-z]+x", "[a-z]*$", "[0-9]{64}x", "^a|[a-z]+x", "(a{8}){8}",
    ];
    for (const pattern of hostile) {
      expect(isPortablePattern(pattern), pattern).toBe(false);
      expect(details([text(pattern)], { code: "aaaa!" }), pattern).toEqual([]);
    }
    const catalog = new CollectionCatalog({ collections: ["tags"], collection_schemas: { tags: { scope: "list_id", fields: { slug: { type: "text", nullable: true, has_default: false, insertable: true, updatable: true, pattern: "^([a-z]+)+$" } } } } });
    expect(catalog.check("tags", { slug: "aaaa!" }, false)).toEqual({ slug: "aaaa!" });
  });

  it("a pattern whose next character always decides the way on stays portable, however its parts repeat", () => {
    for (const pattern of [
      "^[a-z0-9]+(-[a-z0-9]+)*$", "^[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8})*$", "^[A-Za-z][A-Za-z0-9_+-]*(/[A-Za-z0-9_+-]+)*$", "^(-[a-z]+)*$",
      "^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$", "^([01][0-9]|2[0-3]):[0-5][0-9]$", "^a+b[ab]*c$", "^(x|)y*$",
      "^[a-z]+$|^[0-9]+$", "[a-z]+", "[0-9]{3}", "x[a-z]*", "^a|b",
    ]) {
      expect(isPortablePattern(pattern), pattern).toBe(true);
    }
    expect(details([text("^[a-z0-9]+(-[a-z0-9]+)*$")], { code: "ab-c-" })).toEqual([["/ops/0/data/code", "invalid_format"]]);
    expect(details([text("^[a-z0-9]+(-[a-z0-9]+)*$")], { code: "ab-c-9" })).toEqual([]);
  });

  it("isPortablePattern takes literals, escaped punctuation, anchors, groups, alternation, bounded quantifiers and plain bracket expressions, and nothing else", () => {
    for (const pattern of ["^[a-z0-9_-]+$", "^[^@]+@[^@]+$", "^\\$[0-9]{1,3}(,[0-9]{3})*$", "a{2,}", "(x|)y", "[-a]", "[a^$.*]", "é|🦀", "^#[0-9a-fA-F]{6}$", "^(ab|cd)+\\.x?$", "^(?:ab|cd)+\\.x?$", "^[^@]{1}$"]) {
      expect(isPortablePattern(pattern), pattern).toBe(true);
    }
    for (const pattern of ["(?i)a", "(?=a)", "[[:alpha:]]", "[\\d]", "[]a]", "[^]", "[]", "[z-a]", "[a-c-e]", "a**", "a*?", "a+?", "*a", "^*", "a{256}", "a{3,2}", "a{,2}", "{", "a}", "]", ".", "\\-", "\\n", "\\1", "(a", "a)", "a\\", "[a-"]) {
      expect(isPortablePattern(pattern), pattern).toBe(false);
    }
  });
});

describe("types a JSON value would be converted into: strings only, each in its type's text form", () => {
  const KINDS = [
    field("ch", "character(4)"),
    field("blob", "bytea"),
    field("span", "interval"),
    field("at", "timestamp(3) without time zone"),
    field("clock", "time without time zone"),
    field("name", "character varying(8)"),
  ];

  it("a number, a boolean or an object in a char(n), bytea, interval, varchar, timestamp or time column is invalid_type (the database would store 12 as \"12  \", 5 as \\x35, 3600 as 01:00:00)", () => {
    expect(details(KINDS, { ch: 12, blob: 5, span: 3600, at: 0, clock: 1, name: true })).toEqual(
      ["ch", "blob", "span", "at", "clock", "name"].map((name) => [`/ops/0/data/${name}`, "invalid_type"]),
    );
    expect(details(KINDS, { ch: true, blob: { a: 1 }, span: ["1 day"] })).toEqual(["ch", "blob", "span"].map((name) => [`/ops/0/data/${name}`, "invalid_type"]));
    expect(details(KINDS, { ch: "ab", blob: "\\x00ff", span: "P1Y2M", at: "2026-01-01T10:00:00.123", clock: "24:00:00", name: "x" })).toEqual([]);
    expect(details(KINDS, { span: "1 day 02:00:00", blob: "hello", clock: "10:30", at: "2026-01-01T10:00" })).toEqual([]);
    expect(details(KINDS, { blob: "nul\u0000" })).toEqual([["/ops/0/data/blob", "invalid_characters"]]);
  });

  it("a timestamp without time zone is an ISO date-time without an offset, of the years 0001-9999 (the column would drop an offset, read \"now\" as the server's time, take BC and -infinity)", () => {
    for (const at of ["2026-01-01T10:00:00+05:00", "2026-01-01T10:00:00Z", "now", "-infinity", "infinity", "2026-01-01 10:00:00", "0044-03-15T00:00:00 BC"]) {
      expect(details(KINDS, { at }), at).toEqual([["/ops/0/data/at", "invalid_format"]]);
    }
    expect(details(KINDS, { at: "0000-12-31T23:59:59" })).toEqual([["/ops/0/data/at", "out_of_range"]]);
    expect(details(KINDS, { at: "0001-01-01T00:00:00" })).toEqual([]);
    expect(details(KINDS, { at: "9999-12-31T23:59:59.999" })).toEqual([]);
  });

  it("a time is HH:MM[:SS[.ffffff]], 24:00:00 at most", () => {
    for (const clock of ["24:00:01", "25:00", "10", "10:00:00+02", "now", "allballs"]) {
      expect(details(KINDS, { clock }), clock).toEqual([["/ops/0/data/clock", "invalid_format"]]);
    }
    for (const clock of ["00:00", "23:59:59.999999", "24:00", "24:00:00.000"]) expect(details(KINDS, { clock }), clock).toEqual([]);
  });

  it("a domain's values are checked as its base type (base_type), through an array of it; the domain's name stays the type", () => {
    const DOMAINS = [
      field("due", "app_instant", { base_type: "timestamp with time zone" }),
      field("code", "app_code", { base_type: "character(3)" }),
      field("days", "app_day[]", { base_type: "date[]" }),
      field("count", "app_count", { base_type: "integer" }),
    ];
    expect(details(DOMAINS, { due: "9999-12-31T23:59:59-14:00" })).toEqual([["/ops/0/data/due", "out_of_range"]]);
    expect(details(DOMAINS, { due: 5, code: 12, days: ["2026-01-01", 3], count: "1" })).toEqual([
      ["/ops/0/data/due", "invalid_type"], ["/ops/0/data/code", "invalid_type"], ["/ops/0/data/days/1", "invalid_type"], ["/ops/0/data/count", "invalid_type"],
    ]);
    expect(details(DOMAINS, { due: "2026-01-01T00:00:00Z", code: "abc", days: ["2026-01-01", null], count: 3 })).toEqual([]);
    // The client builds the same from GET /v1/meta.
    const catalog = new CollectionCatalog({ collections: ["items"], collection_schemas: { items: { scope: "list_id", fields: Object.fromEntries(DOMAINS.map(({ name, ...spec }) => [name, spec])) } } });
    expect(() => catalog.check("items", { due: "9999-12-31T23:59:59-14:00" }, false)).toThrow(expect.objectContaining({ details: [expect.objectContaining({ field: "/data/due", code: "out_of_range" })] }));
  });

  it("a char(n) compares no length bound of a check (char_length counts it without its trailing blanks)", () => {
    expect(details([field("ch", "character(4)", { max_length: 2 })], { ch: "ab  " })).toEqual([]);
  });
});

describe("types with no schema of their own: by their category (pg_type.typcategory, published as category)", () => {
  const OTHERS = [
    field("tag", "extensions.citext", { category: "S" }),
    field("tags", "extensions.citext[]", { category: "S" }),
    field("path", "extensions.ltree", { category: "U" }),
    field("addr", "inet", { category: "I" }),
    field("spot", "point", { category: "G" }),
    field("stretch", "int4range", { category: "R" }),
    field("flags", "bit(3)", { category: "V" }),
    field("price", "money", { category: "N" }),
    field("pair", "app_pair", { category: "C" }),
    field("handle", "name", { category: "S" }),
  ];

  it("a number, a boolean, an array or an object is invalid_type where the database would read its text (12 stored as \"12\" in a citext); a string is the database's to parse", () => {
    expect(details(OTHERS, { tag: 12, tags: ["a", true], path: { a: 1 }, addr: 10, spot: [1, 2], stretch: [1, 3], flags: 101, price: 12, handle: 1 })).toEqual(
      ["tag", "tags/1", "path", "addr", "spot", "stretch", "flags", "price", "handle"].map((name) => [`/ops/0/data/${name}`, "invalid_type"]),
    );
    expect(details(OTHERS, { tag: "Ab", tags: ["a", null], path: "a.b", addr: "10.0.0.1", spot: "(1,2)", stretch: "[1,3)", flags: "101", price: "$12.00", handle: "h" })).toEqual([]);
    expect(details(OTHERS, { tag: "nul\u0000" })).toEqual([["/ops/0/data/tag", "invalid_characters"]]);
  });

  it("a composite takes an object (its fields are the database's to read), as a pull lists it", () => {
    expect(details(OTHERS, { pair: "(x,1)" })).toEqual([["/ops/0/data/pair", "invalid_type"]]);
    expect(details(OTHERS, { pair: [1] })).toEqual([["/ops/0/data/pair", "invalid_type"]]);
    expect(details(OTHERS, { pair: { a: "x", b: 1 } })).toEqual([]);
  });

  it("a name is at most 63 bytes (Postgres would cut it)", () => {
    expect(details(OTHERS, { handle: "é".repeat(32) })).toEqual([["/ops/0/data/handle", "too_long"]]);
    expect(details(OTHERS, { handle: "é".repeat(31) + "x" })).toEqual([]);
  });

  it("a type taking strings stores no number (a long number there is the wrong type, not inexact); a composite's fields may; a field without category (an older server's meta) keeps any JSON", () => {
    const byName = new Map(OTHERS.map((f) => [f.name, f]));
    expect(storesExactNumbers(byName.get("tag")!)).toBe(false);
    expect(storesExactNumbers(byName.get("price")!)).toBe(false);
    expect(printsLongNumbers(byName.get("tags")!)).toBe(false);
    expect(storesExactNumbers(byName.get("pair")!)).toBe(true);
    expect(storesExactNumbers(field("addr", "inet"))).toBe(true);
    expect(details([field("addr", "inet")], { addr: 10 })).toEqual([]);
  });
});

describe("numeric(p,s) columns: no more digits after the point than the scale keeps (Postgres would round them away)", () => {
  const SCALED = [
    field("tiny", "numeric(40,20)", { category: "N" }),
    field("cents", "numeric(10,2)[]", { category: "N" }),
    field("hundreds", "numeric(5,-2)", { category: "N" }),
    field("price", "app_price", { base_type: "numeric(8,2)", category: "N" }),
    field("any", "numeric", { category: "N" }),
  ];

  it("refuses 1e-21 in a numeric(40,20), 1.005 in a numeric(10,2)[], 150 in a numeric(5,-2), 0.001 in a domain over numeric(8,2) (not_exact)", () => {
    expect(details(SCALED, { tiny: 1e-21, cents: [1.5, 1.005], hundreds: 150, price: 0.001 })).toEqual([
      ["/ops/0/data/tiny", "not_exact"], ["/ops/0/data/cents/1", "not_exact"], ["/ops/0/data/hundreds", "not_exact"], ["/ops/0/data/price", "not_exact"],
    ]);
    expect(details(SCALED, { tiny: 1.5e-20 })).toEqual([["/ops/0/data/tiny", "not_exact"]]);
  });

  it("takes what it keeps: 1e-20, 1.5 in cents, -1.2e4 or 0 in hundreds, any number in an unscaled numeric", () => {
    expect(details(SCALED, { tiny: 1e-20, cents: [1.5, -0.01, null], hundreds: -1.2e4, price: 123456.78, any: 1e-21 })).toEqual([]);
    expect(details(SCALED, { hundreds: 0, tiny: 12345678901234567890 })).toEqual([]);
  });
});


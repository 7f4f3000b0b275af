// pgArray builds the array literals the push sends as $n::uuid[] / text[] /
// bigint[] / jsonb[] parameters: whatever the strings hold, Postgres must read
// back exactly the values that went in (a wrong escape would store another
// user's text in the ledger, or fail the whole batch). Read back as JSON
// (to_jsonb): postgres.js' own array parser takes a NULL element for text.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { pgArray } from "../../functions/api/lib/pg-array.ts";
import { adminSql } from "../support/harness.ts";

/** Text Postgres can hold: no NUL, no lone surrogate. */
const storableText = fc.string({ unit: "grapheme", maxLength: 40 }).filter((s) => !s.includes("\u0000"));

describe("pgArray", () => {
  it("text[]: any storable strings and nulls come back as they went in (quotes, backslashes, braces, commas, \"NULL\", empty)", async () => {
    const edge = ["NULL", "null", "", " ", "{", "}", ",", '"', "\\", '\\"', "a,b", "{x,y}", "tab\there", "line\nbreak", "é 𝓽 👍🏽"];
    const [{ a }] = await adminSql<{ a: (string | null)[] }[]>`select to_jsonb(${pgArray([...edge, null])}::text[]) as a`;
    expect(a).toEqual([...edge, null]);
    await fc.assert(fc.asyncProperty(fc.array(fc.option(storableText), { maxLength: 20 }), async (values) => {
      const [{ a }] = await adminSql<{ a: (string | null)[] }[]>`select to_jsonb(${pgArray(values)}::text[]) as a`;
      expect(a).toEqual(values);
    }), { numRuns: 150 });
  });

  it("uuid[], bigint[] and jsonb[] (each value's JSON text) read back as the values", async () => {
    const ids = ["0b8a6b2e-7c1d-4f55-9a3e-2f7e4c1d9b00", "f3c1e2d4-5b6a-4c7d-8e9f-a0b1c2d3e4f5"];
    const errors = [{ code: "X", message: 'a "quoted" \\ back-slashed, {braced} text' }, null, { details: [{ field: "/ops/0/data/ü" }] }];
    const [row] = await adminSql<{ ids: string[]; versions: (number | null)[]; errors: unknown[] }[]>`
      select to_jsonb(${pgArray(ids)}::uuid[]) as ids, to_jsonb(${pgArray([1, null, Number.MAX_SAFE_INTEGER])}::bigint[]) as versions,
             to_jsonb(${pgArray(errors.map((e) => (e === null ? null : JSON.stringify(e))))}::jsonb[]) as errors`;
    expect(row.ids).toEqual(ids);
    expect(row.versions).toEqual([1, null, Number.MAX_SAFE_INTEGER]);
    expect(row.errors).toEqual(errors);
    const [{ n }] = await adminSql<{ n: number }[]>`select cardinality(${pgArray([])}::uuid[]) as n`;
    expect(n).toBe(0);
  });
});

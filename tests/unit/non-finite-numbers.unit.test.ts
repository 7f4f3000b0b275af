// A JSON body's numbers that JSON.parse turns into ±Infinity are refused
// (400 not_finite); the walk that finds them is skipped when none of the
// text's long number literals is one (mayHoldNonFiniteNumber below: what the
// request body's check in lib/middleware.ts does). What a user would notice if the pre-check
// were wrong: `"base_version": 1e309` accepted as null. So: whenever
// JSON.parse yields a non-finite number, the pre-check says it may.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { longNumberLiterals } from "../../functions/_shared/long-number-literals.ts";
import { isNonFiniteNumberLiteral, nonFiniteNumberAt } from "../../functions/_shared/non-finite-numbers.ts";

const mayHoldNonFiniteNumber = (text: string) => longNumberLiterals(text).some(isNonFiniteNumberLiteral);

const digits = (min: number, max: number) => fc.string({ unit: fc.constantFrom(..."0123456789"), minLength: min, maxLength: max });

/** JSON number texts of every shape: integer part up to 400 digits, a fraction, an exponent of up to 4 digits. */
const anyNumberText = fc.tuple(
  fc.boolean(),
  fc.oneof(fc.constant("0"), fc.tuple(fc.constantFrom(..."123456789"), digits(0, 400)).map(([first, rest]) => first + rest)),
  fc.option(digits(1, 30), { nil: undefined }),
  fc.option(fc.tuple(fc.constantFrom("e", "E"), fc.constantFrom("", "+", "-"), digits(1, 4)), { nil: undefined }),
).map(([negative, int, fraction, exponent]) =>
  `${negative ? "-" : ""}${int}${fraction === undefined ? "" : `.${fraction}`}${exponent === undefined ? "" : exponent.join("")}`
);
/** Near the edge: 200 to 320 digits with a two-digit exponent (overflows from 210 digits with e99 on). */
const edgeNumberText = fc.tuple(fc.constantFrom(..."123456789"), digits(199, 319), fc.integer({ min: 0, max: 99 }))
  .map(([first, rest, exponent]) => `${first}${rest}e${exponent}`);
const numberText = fc.oneof(anyNumberText, edgeNumberText);

describe("non-finite numbers in a JSON body", () => {
  it("the pre-check never misses a number JSON.parse makes infinite", () => {
    // Wherever JSON puts a number: a member's value, an array's first or later
    // element, the whole text; with any JSON whitespace around it.
    const whitespace = fc.string({ unit: fc.constantFrom(" ", "\t", "\n", "\r"), maxLength: 3 });
    const place = fc.constantFrom(
      (n: string) => `{"ops":[{"base_version":${n}}]}`,
      (n: string) => `{"a":[${n}]}`,
      (n: string) => `[1,${n},2]`,
      (n: string) => n,
    );
    fc.assert(
      fc.property(numberText, place, whitespace, whitespace, (text, put, before, after) => {
        const body = put(`${before}${text}${after}`);
        const infinite = nonFiniteNumberAt(JSON.parse(body)) !== null;
        if (infinite) expect(mayHoldNonFiniteNumber(body)).toBe(true);
      }),
      { numRuns: 20_000 },
    );
  });

  it("catches the shapes that overflow, and lets ordinary bodies skip the walk", () => {
    for (const text of ["1e309", "-1E+309", "1e0400", "1" + "0".repeat(309), "1" + "0".repeat(250) + "e99", "2" + "0".repeat(210) + "e98", "2e308"]) {
      expect(mayHoldNonFiniteNumber(`{"n":${text}}`), text).toBe(true);
      expect(nonFiniteNumberAt(JSON.parse(`{"n":${text}}`)), text).toBe("/n");
    }
    for (const text of ["1e-400", "1.5", "1e99", "123456789012345678901234567890", "-0.000001", "1" + "0".repeat(200) + "e99"]) {
      expect(mayHoldNonFiniteNumber(`{"ops":[{"base_version":${text},"data":{"title":"milk"}}]}`), text).toBe(false);
    }
    // Hex digits of uuids ("…-3e45…") are not numbers: a sync body full of them skips the walk.
    const ids = `{"ops":[{"op_id":"0d3e4567-e89b-12d3-a456-426614174000","record_id":"9e123e45-1e99-4e00-8e71-123456789abc","base_version":12}]}`;
    expect(mayHoldNonFiniteNumber(ids)).toBe(false);
  });
});

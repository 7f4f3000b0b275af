// Pools of hostile values: what a buggy client, a proxy or an attacker sends.
// Kept free of the server-internal words the leak check looks for, so an
// echoed input can never be mistaken for a leak.
import fc from "fast-check";

/** Strings that have broken JSON, Postgres text/jsonb, URL or header handling elsewhere. */
export const NASTY_STRINGS: string[] = [
  "",
  " ",
  "\u0000",
  "a\u0000b",
  "\ud800",
  "\udfff\ud800",
  "\ufeff",
  "\u202e\u0041\u0042",
  "💥🧨",
  "e\u0301",
  "' or '1'='1",
  "'; drop table records; --",
  "\\",
  "\\u0000",
  "%00",
  "%",
  "../../../etc/passwd",
  "${7*7}{{7*7}}",
  "<script>alert(1)</script>",
  "null",
  "undefined",
  "NaN",
  "true",
  "-1",
  "0",
  "1e999",
  "00000000-0000-0000-0000-000000000000",
  "ffffffff-ffff-ffff-ffff-ffffffffffff",
  "__proto__",
  "constructor",
  "\r\n",
  "\t",
  "ΑΒΓ",
  "日本語テキスト",
];

/** Numbers at the edges of JSON, JavaScript and Postgres integer types. */
export const EDGE_NUMBERS: number[] = [
  0, -0, -1, 1, 0.5, -0.5, 1.5, 2 ** 31 - 1, 2 ** 31, -(2 ** 31) - 1, 2 ** 53, 2 ** 53 + 2, -(2 ** 53), 2 ** 63, 2 ** 64,
  1e308, -1e308, 5e-324, 1e-7, 123456789.123456789,
];

/** JSON texts for numbers JavaScript cannot hold exactly (sent verbatim). */
export const RAW_NUMBER_TEXTS: string[] = ["1e999", "-1e999", "123456789012345678901234567890", "1.0000000000000000000000001", "-0.0", "1E+2", "0e0"];

export const nastyString: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...NASTY_STRINGS) },
  { weight: 2, arbitrary: fc.string({ maxLength: 40, unit: "binary" }) },
  { weight: 1, arbitrary: fc.string({ maxLength: 20, unit: "grapheme" }) },
);

/** A value of a random JSON type, biased to edge cases. */
export const junkValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 2, arbitrary: nastyString },
  { weight: 2, arbitrary: fc.constantFrom(...EDGE_NUMBERS) },
  { weight: 1, arbitrary: fc.constantFrom(null, true, false, [], {}, [null], { "": null }) },
  { weight: 1, arbitrary: fc.integer() },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 1, arbitrary: fc.array(fc.jsonValue({ maxDepth: 1 }), { maxLength: 5 }) },
  { weight: 1, arbitrary: fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 4 }) },
);

/** Query-string values (before percent-encoding). */
export const junkQueryValue: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom("", "-1", "0", "1", "1.5", "1e3", "1e999", "NaN", "Infinity", "0x10", " 5", "5 ", "+5", "99999999999999999999", "true", "null", "[]", "{}", ",", ",,", "a,b", "%", "%zz"),
  nastyString,
  fc.nat({ max: 5000 }).map((n) => "x".repeat(n)),
);

/** Random printable header text (Node refuses control characters in headers). */
export const headerText: fc.Arbitrary<string> = fc.oneof(
  fc.string({ maxLength: 60, unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)) }),
  fc.string({ maxLength: 30, unit: fc.integer({ min: 0xa0, max: 0xff }).map((c) => String.fromCharCode(c)) }),
  fc.nat({ max: 12_000 }).map((n) => "z".repeat(n)),
);

/** Wraps a value so deep that recursive parsers and validators overflow their stacks. */
export class DeepNesting {
  constructor(readonly depth: number, readonly kind: "array" | "object") {}
  text(): string {
    return this.kind === "array" ? "[".repeat(this.depth) + "]".repeat(this.depth) : '{"a":'.repeat(this.depth) + "1" + "}".repeat(this.depth);
  }
}

/** A number written verbatim into the JSON text (one JavaScript cannot represent). */
export class RawNumber {
  constructor(readonly text: string) {}
}

/**
 * JSON.stringify that writes DeepNesting and RawNumber verbatim; returns the
 * text of a body no JavaScript object could produce by itself.
 */
export function stringifyWithRaw(value: unknown): string {
  const raws: string[] = [];
  const text = JSON.stringify(value, (_key, v) => {
    if (v instanceof DeepNesting) {
      raws.push(v.text());
      return `\u0001RAW${raws.length - 1}\u0001`;
    }
    if (v instanceof RawNumber) {
      raws.push(v.text);
      return `\u0001RAW${raws.length - 1}\u0001`;
    }
    return v;
  }) ?? "null";
  // JSON.stringify escapes U+0001 as \u0001, so the marker cannot clash with real data.
  return text.replace(/"\\u0001RAW(\d+)\\u0001"/g, (_m, i: string) => raws[Number(i)]);
}

// Numbers JSON.parse cannot hold exactly. A JSON number is read into a
// double, which keeps 15 to 17 significant digits: 12345678901234567 reads as
// 12345678901234568, 1.000000000000000000001 as 1, 1e-400 as 0. The push then
// writes the double (JSON.stringify) into a numeric, bigint or jsonb column,
// which would have kept every digit: another number than the client sent,
// stored without a word. Such a number is refused where it is (an op's data:
// that op, rejected `not_exact`, plan-batch.ts; anywhere else in a request's
// body: the request, 400 `not_exact`, lib/middleware.ts acceptJsonBody).
//
// The rule: a number literal is inexact when the double it reads as, written
// back as JSON, is another decimal number than the literal (compared as
// numbers: 1.50, 1.5 and 15e-1 are one number; 0.1 is exact, since 0.1 is
// what the double is written as). So nothing is refused that would be stored
// as sent, and nothing accepted is stored as another number. A literal of at
// most 15 significant digits with an exponent of at most two digits is always
// exact: any decimal of at most 15 digits reads into a double that 15 digits
// give back (DBL_DIG), and that is a normal double (1e-114 .. 1e114), so its
// shortest form is that decimal again. Only longer literals, or those with a
// three-digit exponent, need a look: one scan of the text finds them
// (long-number-literals.ts, shared with the non-finite numbers' rule), so a
// body without them (almost all) costs that scan; the walk that says where
// runs only when one of them really is inexact.
import type { FieldDetail } from "./errors.ts";
import { longNumberLiterals } from "./long-number-literals.ts";
import { jsonPointer } from "./validation-details.ts";

export interface InexactNumber {
  /** Where in the parsed JSON (object keys, array indexes). */
  path: (string | number)[];
  /** The number as the text held it. */
  literal: string;
}

const LITERAL = /^-?(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;

/** A JSON number literal's value as significant digits and a decimal exponent ("0" for zero, whatever its sign). */
function decimal(literal: string): string {
  const [, whole, fraction = "", exponent = "0"] = LITERAL.exec(literal)!;
  const all = whole + fraction;
  const first = all.search(/[1-9]/);
  if (first === -1) return "0";
  const digits = all.slice(first).replace(/0+$/, "");
  const point = whole.length - first + Number(exponent);
  return `${literal.startsWith("-") ? "-" : ""}${digits}e${point}`;
}

/**
 * How many digits after the decimal point a number literal's value has (its trailing zeros aside):
 * 1.50 → 1, 1e-21 → 21, 150 → -1 (its last digit is the tens); zero has none (-Infinity).
 */
export function fractionDigits(literal: string): number {
  const value = decimal(literal);
  if (value === "0") return -Infinity;
  const [digits, point] = value.replace(/^-/, "").split("e");
  return digits.length - Number(point);
}

/**
 * Whether JSON.parse reads this number literal as a double that JSON.stringify writes as another
 * number. A literal beyond every finite double (1e309) is not this rule's: it reads as ±Infinity
 * (non-finite-numbers.ts).
 */
export function isInexactNumberLiteral(literal: string): boolean {
  const value = Number(literal);
  if (!Number.isFinite(value)) return false;
  const written = String(value); // JSON.stringify's text of a finite number
  return written !== literal && decimal(literal) !== decimal(written);
}

/**
 * Whether the JSON text holds a number JSON.parse cannot hold exactly; `literals`: its long
 * literals, when a scan found them already (the request's body: lib/middleware.ts).
 */
export function mayHoldInexactNumber(text: string, literals: readonly string[] = longNumberLiterals(text)): boolean {
  return literals.some(isInexactNumberLiteral);
}

const NUMBER_AT = /-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

/**
 * Every inexact number of the JSON text (valid JSON: it parsed), with its path, in document order.
 * Iterative, one pass over the text, skipping strings; run only when mayHoldInexactNumber said yes.
 * A key named twice in an object gives both values' numbers the same path (JSON.parse keeps the
 * last): check the parsed value there (inexactNumberAt).
 */
export function inexactNumbersIn(text: string): InexactNumber[] {
  const found: InexactNumber[] = [];
  // The key or index of each array and object we are in, and which of them are arrays.
  const path: (string | number)[] = [];
  const inArray: boolean[] = [];
  let expectingKey = false;
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === '"') {
      let end = i + 1;
      for (;;) {
        end = text.indexOf('"', end);
        let backslashes = 0;
        while (text[end - 1 - backslashes] === "\\") backslashes++;
        if (backslashes % 2 === 0) break;
        end++;
      }
      if (expectingKey) {
        const raw = text.slice(i + 1, end);
        path[path.length - 1] = raw.includes("\\") ? JSON.parse(text.slice(i, end + 1)) : raw;
        expectingKey = false;
      }
      i = end + 1;
    } else if (c === "{" || c === "[") {
      inArray.push(c === "[");
      path.push(c === "[" ? 0 : "");
      expectingKey = c === "{";
      i++;
    } else if (c === "}" || c === "]") {
      inArray.pop();
      path.pop();
      i++;
    } else if (c === ",") {
      if (inArray[inArray.length - 1]) (path[path.length - 1] as number)++;
      else expectingKey = true;
      i++;
    } else if (c === "-" || (c >= "0" && c <= "9")) {
      NUMBER_AT.lastIndex = i;
      const literal = NUMBER_AT.exec(text)![0];
      if (isInexactNumberLiteral(literal)) found.push({ path: path.slice(), literal });
      i += literal.length;
    } else {
      i++; // whitespace, ':', the letters of true, false and null
    }
  }
  return found;
}

/**
 * The JSON Pointer (from `value`) of an inexact number found at `path` if the parsed value there
 * is that number as read (not another value under a key named twice), else null.
 */
export function inexactNumberAt(value: unknown, found: InexactNumber): string | null {
  let item = value;
  for (const key of found.path) {
    if (typeof item !== "object" || item === null || !Object.hasOwn(item, key)) return null;
    item = (item as Record<string | number, unknown>)[key];
  }
  return item === Number(found.literal) ? jsonPointer(found.path) : null;
}

/** The `not_exact` detail of an inexact number (its literal) at `field`, a JSON Pointer. */
export function inexactNumberDetail(field: string, literal: string): FieldDetail {
  return {
    field,
    code: "not_exact",
    message: `would be stored as ${String(Number(literal))}: a number is read as a double, which holds at most 15 to 17 significant digits`,
  };
}

// Rows as Postgres printed them for the push (row-json.ts: the records it
// read, and those it wrote, read back), parsed so that a push answers with the
// same numbers a pull lists. A pull passes Postgres' text through untouched;
// the push parses it, and JSON.parse reads a bigint of 9007199254740993 or a
// jsonb number 123456789012345678901234567890.123456789 into a double, which
// the answer then wrote back rounded. Such a number (inexact-numbers.ts) is
// kept as its text here (JSON.rawJSON: JSON.stringify writes it as it came),
// through V8's JSON.parse source text access (Deno 2).
//
// What it costs: nothing for a collection none of whose columns can print such
// a number (mayHoldInexactNumbers, collections.ts: the sample app's); for one
// that can, one scan of the text for long literals (long-number-literals.ts),
// and a JSON.parse with a reviver only when one of them really is inexact.
import { isInexactNumberLiteral, mayHoldInexactNumber } from "../../_shared/inexact-numbers.ts";

interface RawJsonApi {
  rawJSON?: (text: string) => unknown;
}

const rawJSON = (JSON as unknown as RawJsonApi).rawJSON;

/** JSON.parse of rows' JSON text, every number a double cannot hold kept as its text. */
export function parseRowsJson<T>(text: string): T {
  if (!rawJSON || !mayHoldInexactNumber(text)) return JSON.parse(text);
  return JSON.parse(text, (_key: string, value: unknown, context?: { source?: string }) =>
    typeof value === "number" && context?.source !== undefined && isInexactNumberLiteral(context.source) ? rawJSON(context.source) : value);
}

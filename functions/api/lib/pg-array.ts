// Postgres array literals for statement parameters ($1::uuid[], $2::text[],
// $3::jsonb[] …): a push sends its ids and ledger rows as typed arrays, which
// Postgres parses far faster than JSON text. Built here in one pass: the
// driver's own array serialiser runs two regular-expression replacements per
// element (~1.5 ms of deno CPU per 500-op push, docs/performance-history.md).

const NEEDS_ESCAPE = /["\\]/;
const ESCAPED = /["\\]/g;

/**
 * `{"a","b",NULL}`: every element double-quoted (so "NULL", "", braces,
 * commas and spaces stay text), a quote or backslash escaped with a backslash,
 * null as NULL. Numbers print as JavaScript prints them; for a jsonb[], pass
 * each value's JSON text. Ids, the common case, are joined in one piece.
 */
export function pgArray(values: readonly (string | number | null)[]): string {
  if (values.length === 0) return "{}";
  for (const value of values) {
    if (value === null || (typeof value === "string" && NEEDS_ESCAPE.test(value))) return `{${values.map(element).join(",")}}`;
  }
  return `{"${values.join('","')}"}`;
}

function element(value: string | number | null): string {
  if (value === null) return "NULL";
  const text = String(value);
  return `"${NEEDS_ESCAPE.test(text) ? text.replace(ESCAPED, "\\$&") : text}"`;
}

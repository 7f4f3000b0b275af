// Sizes of JSON values, counted without building their text.
//
// A record's data is measured as api-v1.md's limit says ("one record's `data`
// (UTF-8 JSON)"): the UTF-8 bytes of its compact JSON text, JSON.stringify's,
// what a client sends and receives, less the fields no client writes (a
// create sends none of them, and an edit must be measured as its create was).
// It is the function's limit alone: no
// database check bounds it a second time (tests/unit/limits.unit.test.ts), so
// none can refuse a record the function accepted.
//
// An op's error stored in the ledger is measured as the database bounds it
// (sync_ops_error_bounded): `octet_length(error::text)`, Postgres' jsonb text,
// which prints ", " and ": " separators and numbers in plain (non-exponent)
// notation, so that an error the function keeps always fits.
// Strings are escaped in both exactly as JSON.stringify does.

/**
 * UTF-8 bytes of a well-formed string (JSON.stringify escapes lone surrogates),
 * counted without encoding it: a TextEncoder allocation per string was a third
 * of planning a 500-op batch.
 */
function utf8Length(text: string): number {
  let bytes = text.length;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) continue;
    if (code < 0x800) bytes += 1;
    else if (code >= 0xd800 && code <= 0xdbff) i++, bytes += 2; // a surrogate pair: 2 UTF-16 units, 4 bytes
    else bytes += 2;
  }
  return bytes;
}

/** Postgres numeric output of the JSON number text JavaScript produces for `value`. */
export function plainNumber(value: number): string {
  const text = JSON.stringify(value);
  const match = /^(-?)(\d+)(?:\.(\d+))?e([+-]\d+)$/.exec(text);
  if (!match) return text;
  const [, sign, whole, fraction = "", exponentText] = match;
  const digits = whole + fraction;
  const point = whole.length + Number(exponentText);
  if (point >= digits.length) return sign + digits + "0".repeat(point - digits.length);
  if (point <= 0) return sign + "0." + "0".repeat(-point) + digits;
  return sign + digits.slice(0, point) + "." + digits.slice(point);
}

/**
 * A number kept as Postgres printed it (JSON.rawJSON: functions/api/sync/lossless-json.ts, where
 * a double cannot hold it): it measures as that text. (JSON.isRawJSON: Deno 2, not every runtime.)
 */
const isRawJson = (JSON as unknown as { isRawJSON?: (value: unknown) => boolean }).isRawJSON ?? (() => false);

/** A character JSON.stringify escapes (quote, backslash, control) or that takes more than one UTF-8 byte. */
const NOT_PLAIN = /["\\\u0000-\u001f\u0080-\uffff]/;

/** Bytes of a string's JSON form: its length plus the quotes, unless it holds such a character. */
function stringBytes(text: string): number {
  return NOT_PLAIN.test(text) ? utf8Length(JSON.stringify(text)) : text.length + 2;
}

/** How a JSON text separates items and keys, and prints numbers. */
interface JsonTextForm {
  /** Bytes of the separator after an item (","/", ") and after a key (":"/": "). */
  separator: number;
  number: (value: number) => string;
}

const NO_FIELDS: ReadonlySet<string> = new Set();

const COMPACT: JsonTextForm = { separator: 1, number: (value) => JSON.stringify(value) };
const JSONB_TEXT: JsonTextForm = { separator: 2, number: plainNumber };

// Walks the value in place (no Object.entries pairs, no JSON text per plain
// string): it runs for every written record of a push.
function measure(value: unknown, form: JsonTextForm): number {
  if (value === null || value === undefined) return 4;
  switch (typeof value) {
    case "boolean":
      return value ? 4 : 5;
    case "number":
      return form.number(value).length;
    case "string":
      return stringBytes(value);
    case "object": {
      if (isRawJson(value)) return (value as { rawJSON: string }).rawJSON.length;
      // "[" "]" or "{" "}", and a separator between items; "key": value pairs in objects.
      if (!Array.isArray(value)) return measureObject(value as Record<string, unknown>, form, NO_FIELDS);
      let bytes = 2;
      let items = 0;
      for (const item of value) bytes += measure(item, form), items++;
      return items === 0 ? bytes : bytes + form.separator * (items - 1);
    }
    default:
      throw new TypeError(`not a JSON value: ${typeof value}`);
  }
}

/** An object's JSON text without the keys in `skip`, with the separators it would then have. */
function measureObject(object: Record<string, unknown>, form: JsonTextForm, skip: ReadonlySet<string>): number {
  let bytes = 2;
  let items = 0;
  for (const key in object) {
    const item = object[key];
    if (Object.hasOwn(object, key) && item !== undefined && !skip.has(key)) bytes += stringBytes(key) + form.separator + measure(item, form), items++;
  }
  return items === 0 ? bytes : bytes + form.separator * (items - 1);
}

/**
 * Bytes of a record's data as UTF-8 JSON text (`JSON.stringify`), less the `serverFields` (those no
 * client may write: created_by, created_at), with the separators the object would then have: what
 * max_record_data_bytes bounds. Without them, a create (the fields it sends) and an edit of the
 * same record (the row as stored) are measured alike.
 */
export function recordDataBytes(data: Record<string, unknown>, serverFields: ReadonlySet<string> = NO_FIELDS): number {
  return measureObject(data, COMPACT, serverFields);
}

/** Bytes of `octet_length(value::text)` for a JSON object stored as jsonb (an op's error in the ledger). */
export function jsonbTextBytes(value: object): number {
  return measure(value, JSONB_TEXT);
}

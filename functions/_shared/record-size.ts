// The size of a record's data as the database measures it: the UTF-8 bytes of
// Postgres' jsonb text form (`octet_length(data::text)`, the records_data_size
// check). Measuring the same thing here means an op over the limit is
// rejected with a clear error instead of failing the whole batch in the
// database. jsonb prints ", " and ": " separators and numbers in plain
// (non-exponent) notation; strings are escaped exactly as JSON.stringify does.
const encoder = new TextEncoder();

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

function measure(value: unknown): number {
  if (value === null || value === undefined) return 4;
  switch (typeof value) {
    case "boolean":
      return value ? 4 : 5;
    case "number":
      return plainNumber(value).length;
    case "string":
      return encoder.encode(JSON.stringify(value)).byteLength;
    case "object": {
      if (Array.isArray(value)) {
        if (value.length === 0) return 2;
        return 2 + value.reduce((sum: number, item) => sum + measure(item), 0) + 2 * (value.length - 1);
      }
      const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
      if (entries.length === 0) return 2;
      return 2 + entries.reduce((sum, [k, v]) => sum + measure(k) + 2 + measure(v), 0) + 2 * (entries.length - 1);
    }
    default:
      throw new TypeError(`not a JSON value: ${typeof value}`);
  }
}

/** Bytes of `octet_length(data::text)` once `data` is stored as jsonb. */
export function recordDataBytes(data: Record<string, unknown>): number {
  return measure(data);
}

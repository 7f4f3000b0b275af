// Reads one whole-number setting from the environment, within its range: a
// value outside it would start fine and then break requests (a timer past
// setTimeout's 2^31-1 ms fires at once, a Postgres timeout past its int is
// refused on every connection, a date past year 9999 is not RFC 3339).
// docs/configuration.md lists every range; the tables in config.ts and
// limits.ts are where they are decided.

export interface IntRange {
  min: number;
  max: number;
}

/** The largest delay setTimeout takes (a longer one fires after 1 ms) and Postgres' largest int setting. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** `raw` as an integer in `range`, else an error naming `name` and the range. */
export function parseIntSetting(name: string, raw: string, range: IntRange): number {
  const value = /^\s*[+-]?\d+\s*$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(value) || value < range.min || value > range.max) {
    throw new Error(`${name} must be a whole number from ${range.min} to ${range.max}, got ${JSON.stringify(raw)}`);
  }
  return value;
}

/** The variable `name` of `env` (parseIntSetting), or `fallback` when it is unset or empty. */
export function intSetting(env: Record<string, string | undefined>, name: string, fallback: number, range: IntRange): number {
  const raw = env[name];
  return raw === undefined || raw === "" ? fallback : parseIntSetting(name, raw, range);
}

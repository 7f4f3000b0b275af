// Reads one whole-number setting from the environment, within its range: a
// value outside it would start fine and then break requests (a timer past
// setTimeout's 2^31-1 ms fires at once, a Postgres timeout past its int is
// refused on every connection, a date past year 9999 is not RFC 3339).
// docs/configuration.md lists every range; the tables in config.ts,
// limits.ts and release-config.ts are where they are decided.
//
// The value is digits only: no sign (no range goes below 1), no spaces, no
// exponent, point or hex. Number() alone reads "1e3", "0x10", "1.0", " 10 "
// and "+10" as numbers; an env file's stray quote or space is then a silent
// different value, or one the operator did not write.

export interface IntRange {
  min: number;
  max: number;
}

/** The largest delay setTimeout takes (a longer one fires after 1 ms) and Postgres' largest int setting. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** A TCP port to listen on (the local gateway's, npm start's). */
export const TCP_PORT: IntRange = { min: 1, max: 65535 };

/** `raw` as an integer in `range`, else an error naming `name` and the range. */
export function parseIntSetting(name: string, raw: string, range: IntRange): number {
  const value = /^[0-9]+$/.test(raw) ? Number(raw) : NaN;
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

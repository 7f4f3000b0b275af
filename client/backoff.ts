// How long to wait before retrying: exponential backoff with full jitter
// (a uniformly random delay in [0, min(max, base·2^attempt)), so many devices
// coming back at once spread out), but never less than the server's
// Retry-After when it sent one.

export interface BackoffOptions {
  /** Cap of the first retry's delay, ms. */
  baseMs: number;
  /** Largest cap, ms. */
  maxMs: number;
  /** Attempts in all (the first try included) before giving up until the next sync. */
  maxAttempts: number;
}

export const DEFAULT_BACKOFF: BackoffOptions = { baseMs: 500, maxMs: 60_000, maxAttempts: 8 };

/** Delay before retry number `attempt` (0 = the first retry). */
export function backoffDelayMs(attempt: number, options: BackoffOptions, random: () => number, retryAfterSeconds?: number): number {
  const cap = Math.min(options.maxMs, options.baseMs * 2 ** Math.min(attempt, 30));
  const jittered = Math.floor(random() * cap);
  const floor = retryAfterSeconds !== undefined && retryAfterSeconds > 0 ? retryAfterSeconds * 1000 : 0;
  return Math.max(jittered, floor);
}

/**
 * Retry-After as seconds: either delta-seconds ("2") or an HTTP date.
 * Undefined when absent or unreadable.
 */
export function parseRetryAfter(header: string | null, now: number = Date.now()): number | undefined {
  if (header === null) return undefined;
  const trimmed = header.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed);
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, Math.ceil((date - now) / 1000));
}

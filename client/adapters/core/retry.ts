// Retrying one request the way every tidesync client must: retryable
// failures (network, 429, 5xx) with exponential backoff and full jitter, never
// sooner than the server's Retry-After; anything else, or the last attempt's
// failure, goes to the caller. The Retry-After also holds for whatever the
// library calls next (RxDB retries a failed handler on its own timer): the
// gate keeps every request of the adapter back until it has passed.
import { isRetryable, retryAfterOf } from "../../api-error.ts";
import { type BackoffOptions, backoffDelayMs, DEFAULT_BACKOFF } from "../../backoff.ts";

export interface RetryOptions {
  backoff: BackoffOptions;
  random: () => number;
  sleep: (ms: number) => Promise<void>;
  now: () => number;
  /** No request before this time (ms since the epoch): the last Retry-After. */
  gate: { until: number };
}

export function retryOptions(options: { backoff?: Partial<BackoffOptions>; random?: () => number; sleep?: (ms: number) => Promise<void>; now?: () => number } = {}): RetryOptions {
  return {
    backoff: { ...DEFAULT_BACKOFF, ...(options.backoff ?? {}) },
    random: options.random ?? Math.random,
    sleep: options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms))),
    now: options.now ?? Date.now,
    gate: { until: 0 },
  };
}

export async function withRetry<T>(call: () => Promise<T>, options: RetryOptions): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    const wait = options.gate.until - options.now();
    if (wait > 0) await options.sleep(wait);
    try {
      return await call();
    } catch (error) {
      const retryAfter = retryAfterOf(error);
      if (retryAfter !== undefined && retryAfter > 0) options.gate.until = Math.max(options.gate.until, options.now() + retryAfter * 1000);
      if (!isRetryable(error) || attempt + 1 >= options.backoff.maxAttempts) throw error;
      const delay = backoffDelayMs(attempt, options.backoff, options.random, retryAfter);
      if (delay > 0) await options.sleep(delay);
    }
  }
}

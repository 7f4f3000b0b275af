// Retrying one request the way every tidesync client must: retryable
// failures (network, 429, 5xx) with exponential backoff and full jitter, never
// sooner than the server's Retry-After; anything else, or the last attempt's
// failure, goes to the caller. The Retry-After also holds for whatever is
// called next — the next sync() of TidesyncClient (its timer, a poke, the app),
// RxDB retrying a failed handler on its own timer: the gate keeps every request
// of one client or adapter back until it has passed. An aborted `signal`
// (client.close() on sign-out) ends a wait at once: a Retry-After may be long.
import { unlessAborted } from "./abortable.ts";
import { isRetryable, retryAfterOf, TidesyncAbortedError } from "./api-error.ts";
import { type BackoffOptions, backoffDelayMs, DEFAULT_BACKOFF } from "./backoff.ts";

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

/** `call`, retried; `onRetry` hears each failure that is retried (before the wait); `signal` ends the waits. */
export async function withRetry<T>(call: () => Promise<T>, options: RetryOptions, onRetry?: (error: unknown) => void, signal?: AbortSignal): Promise<T> {
  let backoff = 0;
  for (let attempt = 0; ; attempt++) {
    // One wait per attempt: the backoff already covers this call's own Retry-After.
    const ms = Math.max(backoff, options.gate.until - options.now());
    if (ms > 0) await unlessAborted(options.sleep(ms), signal);
    if (signal?.aborted) throw new TidesyncAbortedError();
    try {
      return await call();
    } catch (error) {
      const retryAfter = retryAfterOf(error);
      if (retryAfter !== undefined && retryAfter > 0) options.gate.until = Math.max(options.gate.until, options.now() + retryAfter * 1000);
      if (!isRetryable(error) || attempt + 1 >= options.backoff.maxAttempts) throw error;
      onRetry?.(error);
      backoff = backoffDelayMs(attempt, options.backoff, options.random, retryAfter);
    }
  }
}

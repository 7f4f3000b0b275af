// Retrying one request the way every tidesync client must: retryable
// failures (network, 429, 5xx) with exponential backoff and full jitter, never
// sooner than the server's Retry-After; anything else, or the last attempt's
// failure, goes to the caller.
import { isRetryable, retryAfterOf } from "../../api-error.ts";
import { type BackoffOptions, backoffDelayMs, DEFAULT_BACKOFF } from "../../backoff.ts";

export interface RetryOptions {
  backoff: BackoffOptions;
  random: () => number;
  sleep: (ms: number) => Promise<void>;
}

export function retryOptions(options: { backoff?: Partial<BackoffOptions>; random?: () => number; sleep?: (ms: number) => Promise<void> } = {}): RetryOptions {
  return {
    backoff: { ...DEFAULT_BACKOFF, ...(options.backoff ?? {}) },
    random: options.random ?? Math.random,
    sleep: options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms))),
  };
}

export async function withRetry<T>(call: () => Promise<T>, options: RetryOptions): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await call();
    } catch (error) {
      if (!isRetryable(error) || attempt + 1 >= options.backoff.maxAttempts) throw error;
      await options.sleep(backoffDelayMs(attempt, options.backoff, options.random, retryAfterOf(error)));
    }
  }
}

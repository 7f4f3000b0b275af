// Retrying one request the way every tidesync client must: retryable
// failures (network, 429, 5xx) with exponential backoff and full jitter, never
// sooner than the server's Retry-After; anything else, or the last attempt's
// failure, goes to the caller. The Retry-After also holds for whatever is
// called next — the next sync() of TidesyncClient (its timer, a poke, the app),
// RxDB retrying a failed handler on its own timer: the gate keeps every request
// of one client or adapter back until it has passed. An aborted `signal`
// (client.close() on sign-out) ends a wait at once: a Retry-After may be long.
// The gate runs on a monotonic clock, not Date: a device whose time is set
// back an hour would otherwise wait that hour more before every sync. A
// RetryWaker (the app's sync() on reconnect) ends a backoff's wait early, never
// the gate's: the server asked for that one. A wait ended early (either way)
// stops its sleep's timer.
import { abortableSleep, unlessAborted } from "./abortable.ts";
import { isRetryable, retryAfterOf, TidesyncAbortedError } from "./api-error.ts";
import { type BackoffOptions, backoffDelayMs, DEFAULT_BACKOFF } from "./backoff.ts";

/**
 * Waits `ms`. `ended` aborts when the wait is given up on before (close(), a wake): a sleep of its own
 * should then stop its timer (it may reject; nobody waits for it any more).
 */
export type Sleep = (ms: number, ended?: AbortSignal) => Promise<void>;

export interface RetryOptions {
  backoff: BackoffOptions;
  random: () => number;
  sleep: Sleep;
  /** The gate's clock, ms, monotonic (default performance.now()): setting the device's time does not move it. */
  monotonicNow: () => number;
  /**
   * No request before `until` (a monotonicNow time): the last Retry-After. `longestMs`, the largest
   * Retry-After received since the gate was last cleared, bounds any wait on it (a clock that is not
   * monotonic after all, e.g. the Date fallback, cannot stretch it). A request that succeeds clears both.
   */
  gate: { until: number; longestMs: number };
}

/** performance.now() where the platform has it (browsers, Node, Deno, Hermes), else Date.now. */
function defaultMonotonicNow(): () => number {
  const performance = globalThis.performance;
  return typeof performance?.now === "function" ? () => performance.now() : Date.now;
}

export function retryOptions(options: { backoff?: Partial<BackoffOptions>; random?: () => number; sleep?: Sleep; monotonicNow?: () => number } = {}): RetryOptions {
  return {
    backoff: { ...DEFAULT_BACKOFF, ...(options.backoff ?? {}) },
    random: options.random ?? Math.random,
    sleep: options.sleep ?? abortableSleep,
    monotonicNow: options.monotonicNow ?? defaultMonotonicNow(),
    gate: { until: 0, longestMs: 0 },
  };
}

/** How long the gate still holds requests back, ms (never more than the longest Retry-After it was set for). */
function gateWaitMs({ gate, monotonicNow }: RetryOptions): number {
  return Math.min(gate.until - monotonicNow(), gate.longestMs);
}

/** Cuts short the backoff waits under way (none: nothing happens). */
export class RetryWaker {
  private readonly sleepers = new Set<() => void>();

  wake(): void {
    for (const wake of this.sleepers) wake();
  }

  /** True when wake() ended the wait before `slept` did. */
  async sleep(slept: Promise<void>): Promise<boolean> {
    let wake = () => {};
    const woken = new Promise<boolean>((resolve) => {
      wake = () => resolve(true);
      this.sleepers.add(wake);
    });
    try {
      return await Promise.race([slept.then(() => false), woken]);
    } finally {
      this.sleepers.delete(wake);
    }
  }
}

/**
 * `call`, retried; `onRetry` hears each failure that is retried (before the wait); `signal` ends the
 * waits; `waker` ends a backoff's wait early (what is left of a Retry-After is still waited).
 */
export async function withRetry<T>(call: () => Promise<T>, options: RetryOptions, onRetry?: (error: unknown) => void, signal?: AbortSignal, waker?: RetryWaker): Promise<T> {
  let backoff = 0;
  for (let attempt = 0; ; attempt++) {
    // One wait per attempt: the backoff already covers this call's own Retry-After.
    const ms = Math.max(backoff, gateWaitMs(options));
    if (ms > 0) {
      const woken = await wait(ms, options, signal, waker);
      const gateLeft = woken ? gateWaitMs(options) : 0;
      if (gateLeft > 0) await wait(gateLeft, options, signal);
    }
    if (signal?.aborted) throw new TidesyncAbortedError();
    const gateSent = options.gate.until;
    try {
      const result = await call();
      // The server took a request: its Retry-After has passed (unless another call got a new one meanwhile).
      if (options.gate.until === gateSent) Object.assign(options.gate, { until: 0, longestMs: 0 });
      return result;
    } catch (error) {
      const retryAfter = retryAfterOf(error);
      if (retryAfter !== undefined && retryAfter > 0) {
        // Mutated, never replaced: copies of these options (the adapters' guarded ones) share the gate.
        const { gate, monotonicNow } = options;
        gate.until = Math.max(gate.until, monotonicNow() + retryAfter * 1000);
        gate.longestMs = Math.max(gate.longestMs, retryAfter * 1000);
      }
      if (!isRetryable(error) || attempt + 1 >= options.backoff.maxAttempts) throw error;
      onRetry?.(error);
      backoff = backoffDelayMs(attempt, options.backoff, options.random, retryAfter);
    }
  }
}

/** Sleeps `ms`; true when `waker` ended it early, TidesyncAbortedError when `signal` did. Either way its sleep is told (and stops its timer). */
async function wait(ms: number, options: RetryOptions, signal?: AbortSignal, waker?: RetryWaker): Promise<boolean> {
  const ended = new AbortController();
  try {
    const slept = options.sleep(ms, ended.signal);
    return await unlessAborted(waker ? waker.sleep(slept) : slept.then(() => false), signal);
  } finally {
    // Past its time this changes nothing; cut short, the sleep's rejection goes unobserved (nobody waits for it).
    ended.abort();
  }
}

// Waits that give way to an AbortSignal (client.close() on sign-out, a
// request's timeout): the one rule for the client's retry sleeps, its token
// getter and a request whose fetch ignores its signal. A wait given up on
// stops its timer: an armed one would keep a Node or Deno process (a script,
// a test) running until it fires, and wake-ups would pile them up.
import { TidesyncAbortedError } from "./api-error.ts";

/**
 * `value`, or TidesyncAbortedError as soon as `signal` aborts (at once if it already has). The
 * value's own failure after the abort is left unobserved on purpose: nobody waits for it.
 */
export async function unlessAborted<T>(value: T | Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return await value;
  if (signal.aborted) {
    Promise.resolve(value).catch(() => {});
    throw new TidesyncAbortedError();
  }
  let onAbort = () => {};
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(new TidesyncAbortedError());
    signal.addEventListener("abort", onAbort, { once: true });
  });
  try {
    return await Promise.race([value, aborted]);
  } finally {
    signal.removeEventListener("abort", onAbort);
  }
}

/** setTimeout's largest delay (2^31-1 ms, about 24.8 days): Node, Deno and browsers fire a longer one at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * A wait of `ms` (the client's and the adapters' default sleep); rejects with TidesyncAbortedError, its timer cleared, as soon as `signal` aborts.
 * A wait past setTimeout's largest delay (a server's Retry-After of weeks) is waited in parts: handed over whole, it would end at once and the client would send again.
 */
export function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(new TidesyncAbortedError());
  return new Promise((resolve, reject) => {
    let timer: ReturnType<typeof setTimeout>;
    const onAbort = () => {
      clearTimeout(timer);
      reject(new TidesyncAbortedError());
    };
    const wait = (left: number) => {
      timer = setTimeout(() => {
        if (left > MAX_TIMER_MS) return wait(left - MAX_TIMER_MS);
        signal?.removeEventListener("abort", onAbort);
        resolve();
      }, Math.min(left, MAX_TIMER_MS));
    };
    wait(ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

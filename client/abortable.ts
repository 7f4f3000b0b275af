// Waits that give way to an AbortSignal (client.close() on sign-out, a
// request's timeout): the one rule for the client's retry sleeps, its token
// getter and a request whose fetch ignores its signal.
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

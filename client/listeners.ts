// Calling the app's listeners (sync events, status, an adapter's onEvent).
// They run in the middle of a sync, after its answers are stored: one that
// throws (a toast on a screen already gone) must neither keep the other
// listeners from the event nor end the sync. Its error is reported with
// console.error, which React Native shows in development (LogBox) and crash
// reporters can collect, without the fatal handler an uncaught error would
// reach. An async listener's rejection is reported the same way.

/** Calls `listener` (if any) with `value`; what it throws, or rejects with, is reported, not passed on. */
export function callListener<T>(listener: ((value: T) => unknown) | undefined, value: T): void {
  if (!listener) return;
  try {
    const result = listener(value);
    if (result instanceof Promise) result.catch(reportListenerError);
  } catch (error) {
    reportListenerError(error);
  }
}

/** callListener for each of `listeners`, in order (a copy: one may unsubscribe another). */
export function callListeners<T>(listeners: Iterable<(value: T) => unknown>, value: T): void {
  for (const listener of [...listeners]) callListener(listener, value);
}

function reportListenerError(error: unknown): void {
  console.error("tidesync: a listener threw; the other listeners and the sync went on:", error);
}

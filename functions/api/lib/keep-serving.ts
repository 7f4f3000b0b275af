// An uncaught error outside any request would end the worker and every request
// in flight with it. Log it with its stack and keep serving: the pool replaces
// a dead connection, and requests that were using it already failed through
// their own error path (503). (Seen: postgres.js writing, from a setImmediate,
// to the socket of a transaction whose connection had closed,
// porsager/postgres#1208; db.ts no longer lets it.)
//
// Unless the error has left the runtime unable to run setImmediate callbacks:
// when one throws and the next one queued with it is cleared before the queue
// runs again, Deno (2.9) fails in its own loop (01_core.js runImmediates,
// "Cannot read properties of undefined (reading '_idleNext')") on every turn
// from then on, and no setImmediate callback runs again. postgres.js sends
// every statement from one, so each request would wait for its bound and
// answer 503, for as long as the process lives. After an uncaught error a
// probe checks that the queue still runs, and the process exits when it does
// not (1), to be replaced as a crashed worker is. While a probe runs, further
// uncaught errors are counted, not logged one by one: a runtime failing on every
// turn logged thousands of lines a second (630,836 in one convergence run).
// Deno-only (uses the global error events, Deno.exit), so it is not in _shared/.
import { setImmediate } from "node:timers";

/** How long a setImmediate may take to run after an uncaught error before the process gives up. */
const IMMEDIATE_PROBE_MS = 1000;

export function keepServingOnUncaughtErrors(): void {
  const log = (level: string, msg: string, error: unknown) =>
    console.error(JSON.stringify({
      level,
      time: new Date().toISOString(),
      msg,
      error: error instanceof Error ? error.stack ?? error.message : String(error),
    }));
  let probing = false;
  let unlogged = 0;
  const probeImmediates = (after: unknown) => {
    probing = true;
    let ran = false;
    setImmediate(() => (ran = true));
    setTimeout(() => {
      probing = false;
      if (unlogged > 0) log("error", `uncaught errors (kept serving): ${unlogged} more within ${IMMEDIATE_PROBE_MS} ms of this one, not logged one by one`, after);
      unlogged = 0;
      if (ran) return;
      log("fatal", "setImmediate callbacks no longer run after an uncaught error; exiting", after);
      Deno.exit(1);
    }, IMMEDIATE_PROBE_MS);
  };
  globalThis.addEventListener("error", (event) => {
    event.preventDefault();
    if (probing) {
      unlogged++;
      return;
    }
    log("error", "uncaught error (kept serving)", event.error ?? event.message);
    probeImmediates(event.error ?? event.message);
  });
  globalThis.addEventListener("unhandledrejection", (event) => {
    event.preventDefault();
    log("error", "unhandled rejection (kept serving)", event.reason);
  });
}

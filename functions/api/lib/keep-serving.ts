// An uncaught error outside any request (seen: postgres.js writing, from a
// timer, to a socket the database has just terminated — porsager/postgres#1154)
// would end the worker and every request in flight with it. Log it with its
// stack and keep serving: the pool replaces the dead connection, and requests
// that were using it already failed through their own error path (503).
// Deno-only (uses the global error events), so it is not in _shared/.
export function keepServingOnUncaughtErrors(): void {
  const log = (msg: string, error: unknown) =>
    console.error(JSON.stringify({
      level: "error",
      time: new Date().toISOString(),
      msg,
      error: error instanceof Error ? error.stack ?? error.message : String(error),
    }));
  globalThis.addEventListener("error", (event) => {
    event.preventDefault();
    log("uncaught error (kept serving)", event.error ?? event.message);
  });
  globalThis.addEventListener("unhandledrejection", (event) => {
    event.preventDefault();
    log("unhandled rejection (kept serving)", event.reason);
  });
}

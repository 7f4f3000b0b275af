// At most `max` requests of one function process are worked on at once; the
// others wait, in arrival order, before anything reads their body. The
// database pool is the real bottleneck (TIDESYNC_DB_POOL_MAX connections),
// so admitting more only holds more parsed bodies, pages and results in
// memory at once while they queue for a connection; with the limit, 64
// devices measured lower latency and more throughput (docs/performance-history.md).
// A waiting request costs a socket and hyper's read buffer. The routes that
// need no database are registered ahead of it (app.ts) and never wait.
//
// A slot is for work, not for waiting on a client: while a request's body
// is still arriving (readBodyBytes, after the token and rate-limit checks)
// it gives its slot back, and takes one again once the body is in (or the
// read deadline, TIDESYNC_BODY_READ_TIMEOUT_MS, has passed), ahead of the
// requests not yet admitted. So slow bodies, however many and from whoever
// (no token is needed to start one on CI's routes), never stall the requests
// that are ready. Nothing is capped per client: a body being read holds no
// slot, pool connection or other shared budget, only its own socket, timer
// and bytes (at most max_body_bytes, for at most the deadline).
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "./app-env.ts";

/** The admission slot of one request (c.get("admission")). */
export interface AdmissionSlot {
  /**
   * Runs `work` without the slot: gives it back first and takes one again
   * after, ahead of the requests not yet admitted. When `work` fails, the
   * request goes on without a slot: all that is left of it is its error answer.
   */
  without<T>(work: () => Promise<T>): Promise<T>;
}

export function concurrencyLimit(max: number): MiddlewareHandler<AppEnv> {
  let active = 0;
  /** Requests not yet admitted, in arrival order. */
  const waiting: (() => void)[] = [];
  /** Admitted requests back from reading their body, in the order they came back. */
  const returning: (() => void)[] = [];
  const release = () => {
    // Hand the slot straight to the next one (active stays the same), or free it.
    const admit = returning.shift() ?? waiting.shift();
    if (admit) admit();
    else active--;
  };

  return async (c, next) => {
    if (active < max) active++;
    else await new Promise<void>((resolve) => waiting.push(resolve));
    let held = true;
    c.set("admission", {
      async without(work) {
        if (held) {
          held = false;
          release();
        }
        const result = await work();
        if (active < max) active++;
        else await new Promise<void>((resolve) => returning.push(resolve));
        held = true;
        return result;
      },
    });
    try {
      await next();
    } finally {
      if (held) release();
    }
  };
}

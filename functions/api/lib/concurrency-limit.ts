// At most `max` requests of one function process are worked on at once; the
// others wait, in arrival order, before anything reads their body. The
// database pool is the real bottleneck (TIDESYNC_DB_POOL_MAX connections),
// so admitting more only holds more parsed bodies, pages and results in
// memory at once while they queue for a connection; with the limit, 64
// devices measured lower latency and more throughput (docs/performance.md).
// A waiting request costs a socket and hyper's read buffer. The routes that
// need no database are registered ahead of it (app.ts) and never wait.
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "./app-env.ts";

export function concurrencyLimit(max: number): MiddlewareHandler<AppEnv> {
  let active = 0;
  const waiting: (() => void)[] = [];
  return async (_c, next) => {
    if (active < max) active++;
    else await new Promise<void>((resolve) => waiting.push(resolve));
    try {
      await next();
    } finally {
      // Hand the slot straight to the next waiter (active stays the same), or free it.
      const admit = waiting.shift();
      if (admit) admit();
      else active--;
    }
  };
}

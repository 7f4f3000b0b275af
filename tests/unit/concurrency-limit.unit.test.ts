// The function's admission limit (functions/api/lib/concurrency-limit.ts): at
// most `max` requests are worked on at once, the rest wait in arrival order,
// and a slot comes back whether the request succeeded or failed.
import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import type { AppEnv } from "../../functions/api/lib/app-env.ts";
import { concurrencyLimit } from "../../functions/api/lib/concurrency-limit.ts";

/** An app whose requests each wait for their own gate; it records when each starts. */
function gatedApp(max: number) {
  const app = new Hono<AppEnv>();
  const started: number[] = [];
  const gates = new Map<number, () => void>();
  let running = 0;
  let peak = 0;
  app.use("*", concurrencyLimit(max));
  app.get("/work/:n", async (c) => {
    const n = Number(c.req.param("n"));
    started.push(n);
    peak = Math.max(peak, ++running);
    await new Promise<void>((resolve) => gates.set(n, resolve));
    running--;
    if (c.req.query("fail") === "1") throw new Error("boom");
    return c.text(String(n));
  });
  app.onError((_error, c) => c.text("failed", 500));
  const request = (n: number, fail = false) => app.request(`/work/${n}${fail ? "?fail=1" : ""}`);
  const open = async (n: number) => {
    while (!gates.has(n)) await new Promise((r) => setTimeout(r, 1));
    gates.get(n)!();
  };
  return { request, open, started, peak: () => peak };
}

const tick = () => new Promise((r) => setTimeout(r, 5));

describe("concurrencyLimit", () => {
  it("works on at most `max` requests at once and admits the waiting ones in arrival order", async () => {
    const app = gatedApp(2);
    const responses = [1, 2, 3, 4, 5].map((n) => app.request(n));
    await tick();
    expect(app.started).toEqual([1, 2]);
    await app.open(2);
    await tick();
    expect(app.started).toEqual([1, 2, 3]);
    await app.open(1);
    await tick();
    expect(app.started).toEqual([1, 2, 3, 4]);
    for (const n of [3, 4, 5]) await app.open(n);
    expect(await Promise.all(responses.map(async (r) => await (await r).text()))).toEqual(["1", "2", "3", "4", "5"]);
    expect(app.peak()).toBe(2);
  });

  it("frees the slot of a request that failed", async () => {
    const app = gatedApp(1);
    const failing = app.request(1, true);
    const next = app.request(2);
    await tick();
    expect(app.started).toEqual([1]);
    await app.open(1);
    expect((await failing).status).toBe(500);
    await app.open(2);
    expect(await (await next).text()).toBe("2");
    // Both slots' worth of work is done: a new request starts at once.
    const third = app.request(3);
    await tick();
    expect(app.started).toEqual([1, 2, 3]);
    await app.open(3);
    expect((await third).status).toBe(200);
  });
});

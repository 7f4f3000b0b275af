// The function's admission limit (functions/api/lib/concurrency-limit.ts): at
// most `max` requests are worked on at once, the rest wait in arrival order,
// a slot comes back whether the request succeeded or failed, and a request
// holds none while its body is arriving.
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

  it("a request whose body is arriving holds no slot: the next one is admitted meanwhile, and it comes back ahead of those not yet admitted", async () => {
    const app = new Hono<AppEnv>();
    const started: string[] = [];
    const bodies = new Map<string, { arrive: () => void; fail: () => void }>();
    const gates = new Map<string, () => void>();
    app.use("*", concurrencyLimit(1));
    app.get("/work/:name", async (c) => {
      const name = c.req.param("name");
      if (c.req.query("body") === "1") {
        // The body's read: without the slot.
        await c.get("admission")!.without(() => new Promise<void>((resolve, reject) => bodies.set(name, { arrive: resolve, fail: () => reject(new Error("late")) })));
      }
      started.push(name);
      await new Promise<void>((resolve) => gates.set(name, resolve));
      return c.text(name);
    });
    app.onError((_error, c) => c.text("failed", 408));
    const open = async (name: string) => {
      while (!gates.has(name)) await new Promise((r) => setTimeout(r, 1));
      gates.get(name)!();
    };

    const slow = app.request("/work/slow?body=1");
    const late = app.request("/work/late?body=1");
    await tick();
    // Both read their bodies at once with one slot; neither holds it.
    expect([...bodies.keys()]).toEqual(["slow", "late"]);
    const ready = app.request("/work/ready");
    await tick();
    expect(started).toEqual(["ready"]);
    const queued = app.request("/work/queued");
    bodies.get("slow")!.arrive();
    await tick();
    expect(started, "the slot is busy: both wait").toEqual(["ready"]);
    await open("ready");
    await tick();
    expect(started, "the one back from its body goes first").toEqual(["ready", "slow"]);
    // A read that fails (the deadline) gives back no slot it does not hold.
    bodies.get("late")!.fail();
    expect((await late).status).toBe(408);
    await open("slow");
    await tick();
    expect(started).toEqual(["ready", "slow", "queued"]);
    await open("queued");
    expect(await Promise.all([slow, ready, queued].map(async (r) => await (await r).text()))).toEqual(["slow", "ready", "queued"]);
    // One slot, and it is free: a new request starts at once.
    const after = app.request("/work/after");
    await tick();
    expect(started.at(-1)).toBe("after");
    await open("after");
    expect((await after).status).toBe(200);
  });
});

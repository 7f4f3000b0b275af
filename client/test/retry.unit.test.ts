// Retries: exponential backoff with full jitter, Retry-After honoured,
// `retryable` respected, and ALWAYS the same op_ids on every attempt.
import { afterEach, describe, expect, it, vi } from "vitest";
import { TidesyncNetworkError } from "../api-error.ts";
import { backoffDelayMs, parseRetryAfter } from "../backoff.ts";
import { envelope, FakeServer } from "./fake-server.ts";
import { openClient } from "./open-client.ts";

describe("backoffDelayMs", () => {
  const options = { baseMs: 100, maxMs: 5_000, maxAttempts: 10 };

  it("draws uniformly below an exponentially growing cap (full jitter)", () => {
    expect([0, 1, 2, 3].map((attempt) => backoffDelayMs(attempt, options, () => 0.999))).toEqual([99, 199, 399, 799]);
    expect(backoffDelayMs(3, options, () => 0)).toBe(0);
    expect(backoffDelayMs(3, options, () => 0.5)).toBe(400);
  });

  it("never exceeds maxMs", () => {
    expect(backoffDelayMs(40, options, () => 0.999)).toBe(4995);
  });

  it("waits at least Retry-After", () => {
    expect(backoffDelayMs(0, options, () => 0.5, 3)).toBe(3000);
    expect(backoffDelayMs(10, options, () => 0.999, 1)).toBe(4995);
  });
});

describe("parseRetryAfter", () => {
  it("reads delta-seconds and HTTP dates", () => {
    expect(parseRetryAfter("2")).toBe(2);
    const now = Date.parse("2026-11-22T10:00:00Z");
    expect(parseRetryAfter("Sun, 22 Nov 2026 10:00:30 GMT", now)).toBe(30);
    expect(parseRetryAfter(null)).toBeUndefined();
    expect(parseRetryAfter("soon")).toBeUndefined();
  });
});

describe("the sync loop's retries", () => {
  it("resends the same op_ids after lost answers and 503s, waiting Retry-After", async () => {
    const server = new FakeServer();
    const { client, sleeps } = await openClient(server);
    await client.create("tasks", { title: "a" });
    await client.create("tasks", { title: "b" });
    let batchCalls = 0;
    server.script = (request) => {
      if (request.path !== "/v1/sync/batch") return undefined;
      batchCalls++;
      if (batchCalls === 1) {
        server.answer(request); // the server applies it, the answer is lost
        throw new TypeError("socket hang up");
      }
      if (batchCalls === 2) return envelope(503, "UNAVAILABLE", { "retry-after": "4" });
      return undefined;
    };
    const report = await client.sync();
    const batches = server.batches();
    expect(batches).toHaveLength(3);
    expect(batches[1]).toEqual(batches[0]);
    expect(batches[2]).toEqual(batches[0]);
    expect(report).toMatchObject({ duplicates: 2, applied: 2 });
    expect(sleeps[1]).toBeGreaterThanOrEqual(4000);
    expect(client.status).toMatchObject({ state: "online", pending: 0, lastErrorCode: null });
    expect(server.records.size).toBe(2);
  });

  it("gives up after maxAttempts, reports offline, keeps the ops as sent and resends them unchanged next time", async () => {
    const server = new FakeServer();
    const { client, sleeps } = await openClient(server);
    await client.create("tasks", { title: "a" });
    await client.refreshSchema();
    server.script = () => {
      throw new TypeError("network down");
    };
    await expect(client.sync()).rejects.toBeInstanceOf(TidesyncNetworkError);
    expect(sleeps).toHaveLength(4);
    expect(client.status).toMatchObject({ state: "offline", pending: 1, lastErrorCode: "NETWORK" });
    expect(client.pendingOps()[0].sent).toBe(true);
    // Meanwhile the app keeps writing the same record: a new op, not merged into the sent one.
    const [first] = server.batches();
    await client.upsert("tasks", first.ops[0].record_id, { done: true });
    server.script = null;
    await client.sync();
    const batches = server.batches();
    expect(batches.at(-2)).toEqual(first);
    expect(batches.at(-1)?.ops.map((op) => op.data)).toEqual([{ done: true }]);
    expect((await client.get("tasks", first.ops[0].record_id))?.data).toEqual({ title: "a", done: true });
  });

  it("does not retry a non-retryable error", async () => {
    const server = new FakeServer();
    const { client, sleeps } = await openClient(server);
    await client.create("tasks", { title: "a" });
    server.script = () => envelope(401, "UNAUTHENTICATED");
    await expect(client.sync()).rejects.toMatchObject({ code: "UNAUTHENTICATED", status: 401 });
    expect(sleeps).toHaveLength(0);
    expect(client.status).toMatchObject({ state: "error", lastErrorCode: "UNAUTHENTICATED", pending: 1 });
  });

  // The last attempt of a sync gets Retry-After: 120; the next sync (start()'s timer, a poke, the app)
  // comes 30 s later. With the gate's clock moved by the client's sleeps, and with the real monotonic
  // clock (which a fake sleep does not move).
  for (const injectedClock of [true, false]) {
    it(`holds every later request back until the last Retry-After has passed, also in the next sync (${injectedClock ? "injected" : "real"} clock)`, async () => {
      let clock = Date.parse("2026-11-22T10:00:00Z");
      const sentAt: number[] = [];
      const server = new FakeServer();
      server.script = () => {
        sentAt.push(clock);
        return envelope(429, "RATE_LIMITED", { "retry-after": "120" });
      };
      const { client } = await openClient(server, {
        backoff: { maxAttempts: 3 },
        random: () => 0,
        sleep: async (ms) => {
          clock += ms;
        },
        monotonicNow: injectedClock ? () => clock : () => performance.now(),
      });
      await client.create("tasks", { title: "a" });
      await expect(client.sync()).rejects.toMatchObject({ code: "RATE_LIMITED" });
      expect(sentAt).toHaveLength(3);
      clock += 30_000;
      server.script = () => {
        sentAt.push(clock);
        return undefined;
      };
      await client.sync();
      expect(server.records.size).toBe(1);
      // Each request at least 120 s after the 429 before it; none early, none twice as late.
      const gaps = sentAt.slice(1, 4).map((at, i) => at - sentAt[i]);
      expect(gaps.every((gap) => gap >= 120_000 && gap < 240_000), String(gaps)).toBe(true);
    });
  }

  // The device's time is set back (by the user, or a network time fix) while the client runs: Date
  // jumps 3 h back, the monotonic clock does not.
  describe("the device's clock set back", () => {
    afterEach(() => {
      vi.useRealTimers();
    });
    const THREE_HOURS = 3 * 3600_000;

    async function clientOnFakedDate(server: FakeServer) {
      vi.useFakeTimers({ toFake: ["Date"] });
      vi.setSystemTime(Date.parse("2026-11-22T10:00:00Z"));
      const sleeps: number[] = [];
      // The client's clocks as they are by default: lastSyncedAt from Date, the gate on
      // performance.now(). A sleep moves Date as a real wait would (performance.now() stays: the
      // gate then waits a little more than it should, never less).
      const { client } = await openClient(server, {
        now: undefined,
        monotonicNow: undefined,
        backoff: { maxAttempts: 2 },
        sleep: async (ms) => {
          sleeps.push(ms);
          vi.setSystemTime(Date.now() + ms);
        },
      });
      return { client, sleeps };
    }

    it("after a Retry-After whose retry succeeded, the next sync waits for nothing", async () => {
      const server = new FakeServer();
      const { client, sleeps } = await clientOnFakedDate(server);
      await client.create("tasks", { title: "a" });
      server.script = (request) => (request.path === "/v1/sync/batch" && server.batches().length === 1 ? envelope(429, "RATE_LIMITED", { "retry-after": "2" }) : undefined);
      await client.sync();
      expect(sleeps).toEqual([2000]);
      vi.setSystemTime(Date.now() - THREE_HOURS);
      const [first] = server.batches();
      await client.upsert("tasks", first.ops[0].record_id, { done: true });
      await client.sync();
      expect(sleeps).toEqual([2000]);
      expect(server.batches().at(-1)?.ops.map((op) => op.data)).toEqual([{ done: true }]);
    });

    it("a Retry-After still running holds the next sync back for at most its own length", async () => {
      const server = new FakeServer();
      const { client, sleeps } = await clientOnFakedDate(server);
      await client.create("tasks", { title: "a" });
      server.script = () => envelope(429, "RATE_LIMITED", { "retry-after": "120" });
      await expect(client.sync()).rejects.toMatchObject({ code: "RATE_LIMITED" });
      vi.setSystemTime(Date.now() - THREE_HOURS);
      server.script = null;
      sleeps.length = 0;
      await client.sync();
      expect(sleeps).toHaveLength(1);
      expect(sleeps[0]).toBeGreaterThan(100_000);
      expect(sleeps[0]).toBeLessThanOrEqual(120_000);
      expect(server.records.size).toBe(1);
    });
  });

  it("retries a 429 after Retry-After", async () => {
    const server = new FakeServer();
    const { client, sleeps } = await openClient(server);
    await client.create("tasks", { title: "a" });
    server.script = (request) => (request.path === "/v1/sync/batch" && server.batches().length === 1 ? envelope(429, "RATE_LIMITED", { "retry-after": "7" }) : undefined);
    await client.sync();
    expect(sleeps).toEqual([7000]);
    expect(server.batches()).toHaveLength(2);
  });
});

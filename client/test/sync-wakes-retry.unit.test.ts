// "Sync on reconnect": a sync() made while the running sync sleeps in a
// retry's backoff wakes it (the retry goes now) instead of queueing behind the
// sleep; a Retry-After still holds (the server asked to wait). A wait cut
// short stops its timer: wake-ups do not pile timers up.
import { afterEach, describe, expect, it, vi } from "vitest";
import { envelope, FakeServer, LIST_ID } from "./fake-server.ts";
import { openClient } from "./open-client.ts";

/** Sleeps that end only when the test says (or a wake cuts them short), on a clock the test moves. */
function heldSleeps() {
  const clock = { now: 1_000 };
  const asked: number[] = [];
  const ends: Array<() => void> = [];
  return {
    clock,
    asked,
    /** Ends every sleep asked for so far, as if its time had passed. */
    pass() {
      clock.now += Math.max(0, ...asked);
      for (const end of ends.splice(0)) end();
    },
    sleep: (ms: number) => {
      asked.push(ms);
      return new Promise<void>((resolve) => ends.push(resolve));
    },
    monotonicNow: () => clock.now,
  };
}

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 1));
}

describe("sync() while a sync waits to retry", () => {
  it("wakes the backoff: the retry goes at once and the call resolves without the rest of the wait", async () => {
    const server = new FakeServer();
    const held = heldSleeps();
    const { client } = await openClient(server, { sleep: held.sleep, monotonicNow: held.monotonicNow, backoff: { baseMs: 30_000, maxMs: 60_000, maxAttempts: 8 } });
    await client.refreshSchema();
    await client.create("tasks", { list_id: LIST_ID, title: "a" });
    let offline = true;
    server.script = (request) => {
      if (offline && request.path === "/v1/sync/batch") throw new TypeError("offline");
      return undefined;
    };
    const first = client.sync();
    await until(() => held.asked.length === 1);
    expect(client.status.state).toBe("offline");

    offline = false; // the device is back online: the app syncs
    const onReconnect = client.sync();
    const [firstReport, report] = await Promise.all([first, onReconnect]);
    expect(held.asked).toHaveLength(1); // no sleep ended: the wake cut it short
    expect(firstReport).toMatchObject({ applied: 1 });
    expect(report).toMatchObject({ applied: 0 });
    expect(server.batches()).toHaveLength(2);
    expect(client.pendingOps()).toEqual([]);
    expect(client.status.state).toBe("online");
  });

  it("does not cut a Retry-After short: the retry waits until it has passed", async () => {
    const server = new FakeServer();
    const held = heldSleeps();
    const { client } = await openClient(server, { sleep: held.sleep, monotonicNow: held.monotonicNow });
    await client.refreshSchema();
    await client.create("tasks", { list_id: LIST_ID, title: "a" });
    server.script = (request) => (request.path === "/v1/sync/batch" && server.batches().length === 1 ? envelope(503, "UNAVAILABLE", { "retry-after": "120" }) : undefined);
    const first = client.sync();
    await until(() => held.asked.length === 1);
    expect(held.asked[0]).toBe(120_000);

    const second = client.sync();
    await until(() => held.asked.length === 2);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(server.batches()).toHaveLength(1); // still waiting: what is left of the Retry-After
    expect(held.asked[1]).toBe(120_000);

    held.pass();
    expect(await first).toMatchObject({ applied: 1 });
    await second;
    expect(server.batches()).toHaveLength(2);
  });

  it("start()'s own timer does not wake the backoff (only a call of sync(): the app's, a poke's)", async () => {
    const server = new FakeServer();
    const held = heldSleeps();
    const { client } = await openClient(server, { sleep: held.sleep, monotonicNow: held.monotonicNow });
    await client.refreshSchema();
    await client.create("tasks", { list_id: LIST_ID, title: "a" });
    server.script = (request) => {
      if (request.path === "/v1/sync/batch") throw new TypeError("offline");
      return undefined;
    };
    client.start(5);
    await until(() => held.asked.length === 1);
    await new Promise((resolve) => setTimeout(resolve, 40)); // several ticks
    expect(server.batches()).toHaveLength(1);
    expect(held.asked).toHaveLength(1);
    await client.close();
  });

  describe("on the platform's own sleep (its timers faked, to be counted)", () => {
    afterEach(() => {
      vi.useRealTimers();
    });

    async function offlineClient(batch: () => Response | undefined) {
      vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval"] });
      const server = new FakeServer();
      const { client } = await openClient(server, { sleep: undefined, backoff: { baseMs: 30_000, maxMs: 60_000, maxAttempts: 8 } });
      await client.refreshSchema();
      await client.create("tasks", { list_id: LIST_ID, title: "a" });
      server.script = (request) => (request.path === "/v1/sync/batch" ? batch() : undefined);
      return { client, server };
    }

    it("each wake stops the backoff's timer: reconnects that fail again leave one timer, not one per wake", async () => {
      let offline = true;
      const { client, server } = await offlineClient(() => {
        if (offline) throw new TypeError("offline");
        return undefined;
      });
      const syncs = [client.sync()];
      await drained(() => server.batches().length === 1);
      expect(vi.getTimerCount()).toBe(1);
      for (const attempt of [2, 3, 4]) {
        syncs.push(client.sync()); // a flaky connection: the app syncs on each reconnect
        await drained(() => server.batches().length === attempt);
        expect(vi.getTimerCount()).toBe(1);
      }
      offline = false;
      syncs.push(client.sync());
      await Promise.all(syncs);
      expect(client.pendingOps()).toEqual([]);
      expect(vi.getTimerCount()).toBe(0);
    });

    it("a wake during a Retry-After sends nothing early and leaves one timer, the Retry-After's", async () => {
      const { client, server } = await offlineClient(() => (server.batches().length === 1 ? envelope(503, "UNAVAILABLE", { "retry-after": "120" }) : undefined));
      const first = client.sync();
      await drained(() => server.batches().length === 1);
      const second = client.sync();
      await drained(() => true);
      expect(vi.getTimerCount()).toBe(1);
      await vi.advanceTimersByTimeAsync(119_000);
      expect(server.batches()).toHaveLength(1);
      await vi.advanceTimersByTimeAsync(1_000);
      await Promise.all([first, second]);
      expect(server.batches()).toHaveLength(2);
      expect(vi.getTimerCount()).toBe(0);
    });

    it("a Retry-After longer than setTimeout's largest delay (2^31-1 ms, ~24.8 days) is waited out, not sent again at once", async () => {
      const weeks = 35 * 24 * 3600; // Retry-After in seconds: 35 days
      const { client, server } = await offlineClient(() => (server.batches().length === 1 ? envelope(503, "UNAVAILABLE", { "retry-after": String(weeks) }) : undefined));
      const synced = client.sync();
      await drained(() => server.batches().length === 1);
      await vi.advanceTimersByTimeAsync(25 * 24 * 3600 * 1000); // past one timer's largest delay
      expect(server.batches()).toHaveLength(1);
      await vi.advanceTimersByTimeAsync(10 * 24 * 3600 * 1000);
      await synced;
      expect(server.batches()).toHaveLength(2);
      expect(client.pendingOps()).toEqual([]);
      expect(vi.getTimerCount()).toBe(0);
    });
  });
});

/** Until `condition` holds, then until every promise it set going has settled (turns of the event loop: setImmediate is not faked). */
async function drained(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setImmediate(resolve));
  await new Promise((resolve) => setImmediate(resolve));
}

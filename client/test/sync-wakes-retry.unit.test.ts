// "Sync on reconnect": a sync() made while the running sync sleeps in a
// retry's backoff wakes it (the retry goes now) instead of queueing behind the
// sleep; a Retry-After still holds (the server asked to wait).
import { describe, expect, it } from "vitest";
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
});

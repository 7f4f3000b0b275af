// An app's listener that throws (client.on, client.subscribe, an adapter's
// onEvent) is reported with console.error and skipped: the other listeners
// still get every event and the sync (or the adapter's push) goes on.
import { afterEach, describe, expect, it, vi } from "vitest";
import type { KeyValueStore } from "../adapters/core/key-value.ts";
import { pushOps, unansweredOps } from "../adapters/core/push-ops.ts";
import { TidesyncApi } from "../api-client.ts";
import type { SyncEvent } from "../events.ts";
import { retryOptions } from "../retry.ts";
import type { SyncStatus } from "../status.ts";
import { BASE_URL, FakeServer, idSequence, INSTALLATION_ID } from "./fake-server.ts";
import { openClient } from "./open-client.ts";

const R = "00000000-0000-4000-8000-0000000000c1";
const S = "00000000-0000-4000-8000-0000000000c2";

afterEach(() => {
  vi.restoreAllMocks();
});

/** Two tasks this device edited (title only) while another device renamed them: each push answers a conflict and a discarded title. */
async function twoConflicts() {
  const server = new FakeServer();
  for (const id of [R, S]) server.write("tasks", id, { type: "upsert", data: { title: "t", done: false } });
  const harness = await openClient(server);
  await harness.client.sync();
  for (const id of [R, S]) await harness.client.upsert("tasks", id, { title: "mine" });
  for (const id of [R, S]) server.write("tasks", id, { type: "upsert", data: { title: "theirs" } });
  // Pulled by the sync: a change the device has not seen yet.
  server.write("tasks", "00000000-0000-4000-8000-0000000000c3", { type: "upsert", data: { title: "new", done: false } });
  return { server, ...harness };
}

describe("a listener that throws", () => {
  it("client.on: the other listeners get every event, the sync pulls and resolves online, the error is reported", async () => {
    const reported = vi.spyOn(console, "error").mockImplementation(() => {});
    const { client } = await twoConflicts();
    client.on(() => {
      throw new Error("toast failed");
    });
    const seen: string[] = [];
    client.on((event) => seen.push(`${event.type}:${"op" in event ? event.op.record_id : ""}`));
    const report = await client.sync();
    expect(seen).toEqual([`conflict:${R}`, `write_discarded:${R}`, `conflict:${S}`, `write_discarded:${S}`]);
    expect(report).toMatchObject({ conflicts: 2, pulled: expect.any(Number) });
    expect(report.pulled).toBeGreaterThan(0);
    expect(client.status).toMatchObject({ state: "online", pending: 0, lastErrorCode: null });
    expect((await client.get("tasks", R))?.data?.title).toBe("theirs");
    expect(reported).toHaveBeenCalledTimes(4);
    expect(reported.mock.calls[0]).toContainEqual(new Error("toast failed"));
  });

  it("client.subscribe: the other subscribers see every status, the sync resolves", async () => {
    const reported = vi.spyOn(console, "error").mockImplementation(() => {});
    const { client } = await twoConflicts();
    client.subscribe(() => {
      throw new Error("render failed");
    });
    const states: SyncStatus["state"][] = [];
    client.subscribe((status) => states.push(status.state));
    await client.sync();
    expect(states[0]).toBe("syncing");
    expect(states.at(-1)).toBe("online");
    expect(reported).toHaveBeenCalled();
  });

  it("an async listener's rejection is reported, not left unhandled", async () => {
    const reported = vi.spyOn(console, "error").mockImplementation(() => {});
    const { client } = await twoConflicts();
    client.on(async () => {
      throw new Error("async toast failed");
    });
    await client.sync();
    await Promise.resolve();
    expect(reported).toHaveBeenCalledTimes(4);
  });

  it("an adapter's onEvent (pushOps' emit): every op's answer is still handled and stored", async () => {
    const reported = vi.spyOn(console, "error").mockImplementation(() => {});
    const server = new FakeServer();
    const [r, s] = [R, S].map((id) => server.write("tasks", id, { type: "upsert", data: { title: "t" } }));
    for (const id of [R, S]) server.write("tasks", id, { type: "upsert", data: { title: "theirs" } });
    const stored = new Map<string, unknown>();
    const store: KeyValueStore = {
      get: async <T>(key: string) => structuredClone(stored.get(key)) as T | undefined,
      set: async (key, value) => void stored.set(key, structuredClone(value)),
    };
    const newId = idSequence(7);
    const result = await pushOps({
      api: new TidesyncApi({ baseUrl: BASE_URL, getAccessToken: () => "test-token", fetch: server.fetch }),
      installationId: INSTALLATION_ID,
      store,
      retry: retryOptions({ sleep: async () => {} }),
      newId,
      emit: (event: SyncEvent) => {
        throw new Error(`onEvent failed on ${event.type}`);
      },
      bounds: { maxOps: 500, maxBodyBytes: 1_000_000 },
    }, [r, s].map((record) => ({ op_id: newId(), collection: "tasks", record_id: record.id, type: "upsert" as const, base_version: record.version, data: { title: "mine" } })));
    expect(result).toMatchObject({ conflicts: 2, corrections: [{ id: R }, { id: S }] });
    expect(await unansweredOps(store)).toEqual([]);
    expect(reported).toHaveBeenCalledTimes(4);
  });
});

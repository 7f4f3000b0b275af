// The real client against real Deno + Postgres on an installation that
// POST /v1/auth/session has not registered yet (the app started offline): the
// server refuses its batches whole (400 VALIDATION_FAILED on /device_id), the
// client keeps every write queued and fails the sync, and once the app
// registers the installation the next sync pushes them all.
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { TidesyncApi } from "../../client/api-client.ts";
import type { SyncEvent } from "../../client/events.ts";
import { MemoryStorage } from "../../client/storage.ts";
import { TidesyncClient } from "../../client/sync-client.ts";
import { adminSql, createTestUser, stack } from "../support/harness.ts";

describe("the client on an installation not registered yet", () => {
  it("keeps its writes through the refused sync and pushes them after api.startSession", async () => {
    const alice = await createTestUser();
    const api = new TidesyncApi({ baseUrl: stack.apiUrl, getAccessToken: () => alice.token });
    const installationId = randomUUID();
    const client = await TidesyncClient.open({ api, storage: new MemoryStorage(), installationId });
    const events: SyncEvent[] = [];
    client.on((event) => events.push(event));
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push(await client.create("tasks", { list_id: alice.userId, title: `Task ${i}` }));

    await expect(client.sync()).rejects.toMatchObject({ code: "VALIDATION_FAILED", details: [expect.objectContaining({ field: "/device_id", code: "unknown_device" })] });
    expect(client.status).toMatchObject({ state: "error", lastErrorCode: "VALIDATION_FAILED", pending: 4 });
    expect(client.pendingOps().map((p) => p.op.record_id)).toEqual(ids);
    expect(events).toEqual([]);

    await api.startSession({ device: { installation_id: installationId, platform: "ios", app_version: "1.0.0", build_number: 1 } });
    const report = await client.sync();
    expect(report).toMatchObject({ applied: 4, rejected: 0 });
    expect(client.status).toMatchObject({ state: "online", pending: 0, lastErrorCode: null });
    const stored = await adminSql<{ id: string; title: string }[]>`select id, title from public.tasks where list_id = ${alice.userId} order by title`;
    expect(stored).toEqual(ids.map((id, i) => ({ id, title: `Task ${i}` })));
  });
});

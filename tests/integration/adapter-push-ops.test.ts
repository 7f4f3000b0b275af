// The adapters' push (client/adapters/core/push-ops.ts) against the real
// function and Postgres: a record's later ops in a later batch than its
// refused op are still sent and answered, as they would be in one batch.
import { randomUUID } from "node:crypto";
import { expect, it } from "vitest";
import { type FetchFunction, TidesyncApi } from "../../client/api-client.ts";
import { planOps } from "../../client/adapters/core/plan-ops.ts";
import { pushOps, unansweredOps } from "../../client/adapters/core/push-ops.ts";
import type { SyncEvent } from "../../client/events.ts";
import { retryOptions } from "../../client/retry.ts";
import { adminSql, createTestUser, stack } from "../support/harness.ts";
import { pushOk, upsert } from "../support/shared-lists.ts";

it("a record's later op, in a later batch than its op that conflicted, is applied when nobody else changed its fields, else answered conflict and reported", async () => {
  const alice = await createTestUser();
  const [x, y] = [randomUUID(), randomUUID()];
  let offline = true;
  const fetch: FetchFunction = async (input, init) => {
    if (offline && String(input).endsWith("/v1/sync/batch")) throw new TypeError("network down");
    return await globalThis.fetch(input, init);
  };
  const api = new TidesyncApi({ baseUrl: stack.apiUrl, getAccessToken: () => alice.token, fetch });
  for (const id of [x, y]) await api.startSession({ device: { installation_id: id, platform: "ios", app_version: "1.0.0", build_number: 1 } });

  // Tasks R and S exist on both devices; device Y renames both.
  const [r, s] = [randomUUID(), randomUUID()];
  const created = await pushOk(alice, { device_id: y, ops: [r, s].map((id) => upsert("tasks", id, { list_id: alice.userId, title: "t", done: false })) });
  const v1 = created.results[0].record!.version;
  const s1 = created.results[1].record!.version;
  await pushOk(alice, { device_id: y, ops: [upsert("tasks", r, { title: "Y title" }, v1), upsert("tasks", s, { title: "Y title" }, s1)] });

  const kv = new Map<string, unknown>();
  const store = { get: async <T,>(k: string) => kv.get(k) as T | undefined, set: async (k: string, v: unknown) => void kv.set(k, structuredClone(v)) };
  const events: SyncEvent[] = [];
  // Two ops a batch: each record's first op and its later op travel in different batches.
  const context = {
    api, installationId: x, store, retry: retryOptions({ backoff: { maxAttempts: 1 } }), newId: () => randomUUID(),
    emit: (event: SyncEvent) => events.push(event), bounds: { maxOps: 2, maxBodyBytes: 1_048_576 },
  };
  // Device X, offline, renames both: the ops are stored as sent, the network fails.
  const first = planOps([], [r, s].map((id, i) => ({ collection: "tasks", id, type: "upsert" as const, data: { title: "X title" }, baseVersion: [v1, s1][i] })), context.newId);
  await expect(pushOps(context, first)).rejects.toMatchObject({ code: "NETWORK" });
  // Then ticks both done, and renames S again; the next sync runs online.
  offline = false;
  const second = planOps(await unansweredOps(store), [
    { collection: "tasks", id: r, type: "upsert", data: { title: "X title", done: true }, baseVersion: v1 },
    { collection: "tasks", id: s, type: "upsert", data: { title: "X title 2", done: true }, baseVersion: s1 },
  ], context.newId);
  expect(second.map((op) => op.data)).toEqual([{ done: true }, { title: "X title 2", done: true }]);
  const result = await pushOps(context, second);

  const rows = await adminSql<{ id: string; title: string; done: boolean }[]>`select id, title, done from public.tasks where id in (${r}, ${s})`;
  expect(Object.fromEntries(rows.map((row) => [row.id, { title: row.title, done: row.done }]))).toEqual({
    [r]: { title: "Y title", done: true },
    [s]: { title: "Y title", done: true },
  });
  // Every title of X's that did not reach the server is reported; done, which did, is not.
  const discarded = events.filter((event) => event.type === "write_discarded").map((event) => ({ id: event.record_id, title: event.op.data?.title, fields: event.fields }));
  expect(discarded).toEqual([
    { id: r, title: "X title", fields: ["title"] },
    { id: s, title: "X title", fields: ["title"] },
    { id: s, title: "X title 2", fields: ["title"] },
  ]);
  // The local database is corrected to what the server holds, the later edits included.
  expect(result.corrections.map((c) => ({ id: c.id, title: c.record?.data?.title, done: c.record?.data?.done }))).toEqual([
    { id: r, title: "Y title", done: true },
    { id: s, title: "Y title", done: true },
  ]);
  expect(await unansweredOps(store)).toEqual([]);
});

// A batch's writes keep the order the app made them in where the database judges a row by another
// (docs/sync.md "The order of a batch's writes"): a unique value freed, then taken again; a row of
// one synced table created, then a row of another referring to it. Until plan-batch.ts ordered its
// write groups by the batch (writeGroups, mustFollow), it wrote every insert first, then updates,
// then deletes: such ops were refused, and the real client lost the user's new record.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TidesyncApi } from "../../client/api-client.ts";
import { MemoryStorage } from "../../client/storage.ts";
import { TidesyncClient } from "../../client/sync-client.ts";
import { call } from "../support/harness.ts";
import { likeTasks, type ProbeStack, type ProbeUser, startProbeStack } from "../support/probe-stack.ts";
import { remove, upsert } from "../support/shared-lists.ts";

let probe: ProbeStack;
beforeAll(async () => {
  probe = await startProbeStack("rv_order", [
    // A shopping item: one per name per list (an ordinary app rule).
    `create table public.rv_items (id uuid primary key, list_id uuid not null references public.lists(id) on delete cascade,
       name text not null, constraint rv_items_name_per_list unique (list_id, name))`,
    ...likeTasks("rv_items", ["name"]),
    `select app_private.enable_sync('public.rv_items', 'list_id')`,
    // A project and its steps: a foreign key to another synced table (not the scope).
    `create table public.rv_projects (id uuid primary key, list_id uuid not null references public.lists(id) on delete cascade, name text not null)`,
    ...likeTasks("rv_projects", ["name"]),
    `select app_private.enable_sync('public.rv_projects', 'list_id')`,
    `create table public.rv_steps (id uuid primary key, list_id uuid not null references public.lists(id) on delete cascade,
       project_id uuid not null references public.rv_projects(id) on delete cascade, note text)`,
    ...likeTasks("rv_steps", ["project_id", "note"]),
    `select app_private.enable_sync('public.rv_steps', 'list_id')`,
  ]);
}, 180_000);
afterAll(async () => { await probe?.stop(); });

const push = async (u: ProbeUser, ops: unknown[]) => (await call("/v1/sync/batch", { method: "POST", token: u.token, body: { ops }, baseUrl: probe.apiUrl })).body;
const outcome = (r: any) => r.results.map((x: any) => x.status + (x.error ? ` ${x.error.code} ${x.error.message} ${JSON.stringify(x.error.details?.map((d: any) => d.field))}` : ""));

describe("a batch's ops in request order", () => {
  it("real client: delete 'Milk', then add 'Milk' again (offline, one sync)", async () => {
    const u = await probe.newUser();
    const installationId = randomUUID();
    const api = new TidesyncApi({ baseUrl: probe.apiUrl, getAccessToken: () => u.token });
    await api.startSession({ device: { installation_id: installationId, platform: "ios", app_version: "1.0.0", build_number: 1 } });
    const client = await TidesyncClient.open({ api, storage: new MemoryStorage(), installationId });
    const milk = await client.create("rv_items", { list_id: u.userId, name: "Milk" });
    await client.sync();
    await client.delete("rv_items", milk);
    const again = await client.create("rv_items", { list_id: u.userId, name: "Milk" });
    const report = await client.sync();
    const rows = await probe.admin`select id, name from public.rv_items where list_id = ${u.userId}`;
    expect(report).toMatchObject({ applied: 2, rejected: 0 });
    expect(rows.map((r) => ({ ...r }))).toEqual([{ id: again, name: "Milk" }]);
    expect(await client.get("rv_items", again)).toMatchObject({ data: { name: "Milk" }, pending: false });
    expect(await client.get("rv_items", milk)).toBeUndefined();
    await client.close();
  });

  it("raw push: rename a -> b, then create a", async () => {
    const u = await probe.newUser();
    const x = randomUUID();
    const created = await push(u, [upsert("rv_items", x, { list_id: u.userId, name: "a" })]);
    const r = await push(u, [upsert("rv_items", x, { name: "b" }, created.results[0].record.version), upsert("rv_items", randomUUID(), { list_id: u.userId, name: "a" })]);
    expect(outcome(r)).toEqual(["applied", "applied"]);
  });

  it("raw push: add a step to an existing project, create a new project, add a step to it", async () => {
    const u = await probe.newUser();
    const p0 = randomUUID();
    await push(u, [upsert("rv_projects", p0, { list_id: u.userId, name: "old" })]);
    const p1 = randomUUID();
    const r = await push(u, [
      upsert("rv_steps", randomUUID(), { list_id: u.userId, project_id: p0, note: "s0" }),
      upsert("rv_projects", p1, { list_id: u.userId, name: "new" }),
      upsert("rv_steps", randomUUID(), { list_id: u.userId, project_id: p1, note: "s1" }),
    ]);
    expect(outcome(r)).toEqual(["applied", "applied", "applied"]);
    expect((await probe.admin`select note from public.rv_steps where list_id = ${u.userId} order by note`).map((r) => r.note)).toEqual(["s0", "s1"]);
  });
});

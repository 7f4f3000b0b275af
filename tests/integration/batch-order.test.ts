// A batch's writes keep the order the app made them in where the database judges a row by another
// (docs/sync.md "The order of a batch's writes"): a unique value freed, then taken again; a row of
// one synced table created, then a row of another referring to it; a row edited, then moved into a
// list the batch creates after deleting another. Until plan-batch.ts wrote its groups in stages
// (writeGroups, STAGES), it wrote every insert first, then updates, then deletes, the tables in the
// order the batch first touched them: the first cases were refused, and the real client lost the
// user's new record. (A first try at that order, placing each record's one write by its first op,
// lost the edit and move of the last cases, and let a later op take a unique value from an earlier
// create: the cases after "still". Its first stages then split a table's edits around the creates,
// which refused a rename chain, and ordered a list after its tasks once lists referred to tasks
// too: the cases after "and". Then it ordered two non-scope tables referring to each other by
// name, and ran a task's delete before an edit of its list that the delete's policy reads, and an
// item's move before its list's un-archive when the list had a later edit: the cases after "cycles".)
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_LIVE_RECORDS_PER_USER } from "../../functions/_shared/sync-quota.generated.ts";
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
    `create table public.tidesync_test_items (id uuid primary key, list_id uuid not null references public.lists(id) on delete cascade,
       name text not null, qty integer, constraint tidesync_test_items_name_per_list unique (list_id, name))`,
    ...likeTasks("tidesync_test_items", ["name", "qty"]),
    `select app_private.enable_sync('public.tidesync_test_items', 'list_id')`,
    // A project and its steps: a foreign key to another synced table (not the scope).
    `create table public.tidesync_test_projects (id uuid primary key, list_id uuid not null references public.lists(id) on delete cascade, name text not null)`,
    ...likeTasks("tidesync_test_projects", ["name"]),
    `select app_private.enable_sync('public.tidesync_test_projects', 'list_id')`,
    `create table public.tidesync_test_steps (id uuid primary key, list_id uuid not null references public.lists(id) on delete cascade,
       project_id uuid not null references public.tidesync_test_projects(id) on delete cascade, note text)`,
    ...likeTasks("tidesync_test_steps", ["project_id", "note"]),
    `select app_private.enable_sync('public.tidesync_test_steps', 'list_id')`,
    // An outline: a node under another node (a self-reference).
    `create table public.tidesync_test_nodes (id uuid primary key, list_id uuid not null references public.lists(id) on delete cascade,
       title text not null, parent_id uuid references public.tidesync_test_nodes(id) on delete cascade)`,
    ...likeTasks("tidesync_test_nodes", ["title", "parent_id"]),
    `select app_private.enable_sync('public.tidesync_test_nodes', 'list_id')`,
  ]);
}, 180_000);
afterAll(async () => { await probe?.stop(); });

const push = async (u: ProbeUser, ops: unknown[]) => (await call("/v1/sync/batch", { method: "POST", token: u.token, body: { ops }, baseUrl: probe.apiUrl })).body;
const outcome = (r: any) => r.results.map((x: any) => x.status + (x.error ? ` ${x.error.code} ${x.error.message} ${JSON.stringify(x.error.details?.map((d: any) => d.field))}` : ""));
/** The real client of a new device of `u`, signed in to `stack`'s function. */
async function clientOf(stack: ProbeStack, u: ProbeUser): Promise<TidesyncClient> {
  const installationId = randomUUID();
  const api = new TidesyncApi({ baseUrl: stack.apiUrl, getAccessToken: () => u.token });
  await api.startSession({ device: { installation_id: installationId, platform: "ios", app_version: "1.0.0", build_number: 1 } });
  return await TidesyncClient.open({ api, storage: new MemoryStorage(), installationId });
}

describe("a batch's ops in request order", () => {
  it("real client: delete 'Milk', then add 'Milk' again (offline, one sync)", async () => {
    const u = await probe.newUser();
    const client = await clientOf(probe, u);
    const milk = await client.create("tidesync_test_items", { list_id: u.userId, name: "Milk" });
    await client.sync();
    await client.delete("tidesync_test_items", milk);
    const again = await client.create("tidesync_test_items", { list_id: u.userId, name: "Milk" });
    const report = await client.sync();
    const rows = await probe.admin`select id, name from public.tidesync_test_items where list_id = ${u.userId}`;
    expect(report).toMatchObject({ applied: 2, rejected: 0 });
    expect(rows.map((r) => ({ ...r }))).toEqual([{ id: again, name: "Milk" }]);
    expect(await client.get("tidesync_test_items", again)).toMatchObject({ data: { name: "Milk" }, pending: false });
    expect(await client.get("tidesync_test_items", milk)).toBeUndefined();
    await client.close();
  });

  it("raw push: rename a -> b, then create a", async () => {
    const u = await probe.newUser();
    const x = randomUUID();
    const created = await push(u, [upsert("tidesync_test_items", x, { list_id: u.userId, name: "a" })]);
    const r = await push(u, [upsert("tidesync_test_items", x, { name: "b" }, created.results[0].record.version), upsert("tidesync_test_items", randomUUID(), { list_id: u.userId, name: "a" })]);
    expect(outcome(r)).toEqual(["applied", "applied"]);
  });

  it("raw push: add a step to an existing project, create a new project, add a step to it", async () => {
    const u = await probe.newUser();
    const p0 = randomUUID();
    await push(u, [upsert("tidesync_test_projects", p0, { list_id: u.userId, name: "old" })]);
    const p1 = randomUUID();
    const r = await push(u, [
      upsert("tidesync_test_steps", randomUUID(), { list_id: u.userId, project_id: p0, note: "s0" }),
      upsert("tidesync_test_projects", p1, { list_id: u.userId, name: "new" }),
      upsert("tidesync_test_steps", randomUUID(), { list_id: u.userId, project_id: p1, note: "s1" }),
    ]);
    expect(outcome(r)).toEqual(["applied", "applied", "applied"]);
    expect((await probe.admin`select note from public.tidesync_test_steps where list_id = ${u.userId} order by note`).map((r) => r.note)).toEqual(["s0", "s1"]);
  });
});

describe("still: a record's later ops, unique values taken twice, and the quota", () => {
  it("real client: rename a task, delete an old list, create a list and move the task into it, offline, one sync", async () => {
    const u = await probe.newUser();
    const client = await clientOf(probe, u);
    const old = await client.create("lists", { title: "Old" });
    const task = await client.create("tasks", { list_id: u.userId, title: "Buy milk" });
    await client.sync();
    await client.upsert("tasks", task, { title: "Buy oat milk" });
    await client.delete("lists", old);
    const groceries = await client.create("lists", { title: "Groceries" });
    await client.upsert("tasks", task, { list_id: groceries });
    expect(await client.sync()).toMatchObject({ rejected: 0 });
    expect((await probe.admin`select list_id, title from public.tasks where id = ${task}`).map((r) => ({ ...r })))
      .toEqual([{ list_id: groceries, title: "Buy oat milk" }]);
    expect(await client.get("tasks", task)).toMatchObject({ data: { list_id: groceries, title: "Buy oat milk" }, pending: false });
    await client.close();
  });

  it("raw push: edit a task, delete a list, create a list, move the task into it; and a new task moved so", async () => {
    const u = await probe.newUser();
    const [t, x, n, t2, x2, n2] = [randomUUID(), randomUUID(), randomUUID(), randomUUID(), randomUUID(), randomUUID()];
    const seeded = await push(u, [upsert("tasks", t, { list_id: u.userId, title: "t" }), upsert("lists", x, { title: "old" }), upsert("lists", x2, { title: "old 2" })]);
    const [tv, xv, x2v] = seeded.results.map((r: any) => r.record.version);
    const edited = await push(u, [upsert("tasks", t, { title: "t2" }, tv), remove("lists", x, xv), upsert("lists", n, { title: "new" }), upsert("tasks", t, { list_id: n }, tv)]);
    expect(outcome(edited)).toEqual(["applied", "applied", "applied", "applied"]);
    expect((await probe.admin`select list_id, title from public.tasks where id = ${t}`).map((r) => ({ ...r }))).toEqual([{ list_id: n, title: "t2" }]);
    const created = await push(u, [upsert("tasks", t2, { list_id: u.userId, title: "t" }), remove("lists", x2, x2v), upsert("lists", n2, { title: "new" }), upsert("tasks", t2, { list_id: n2 })]);
    expect(outcome(created)).toEqual(["applied", "applied", "applied", "applied"]);
  });

  it("raw push, a self-reference: edit a node, delete another, create a node, move the first under it", async () => {
    const u = await probe.newUser();
    const [sNode, dNode, nNode] = [randomUUID(), randomUUID(), randomUUID()];
    const seeded = await push(u, [upsert("tidesync_test_nodes", sNode, { list_id: u.userId, title: "s" }), upsert("tidesync_test_nodes", dNode, { list_id: u.userId, title: "d" })]);
    const [sv, dv] = seeded.results.map((r: any) => r.record.version);
    const r = await push(u, [
      upsert("tidesync_test_nodes", sNode, { title: "s2" }, sv), remove("tidesync_test_nodes", dNode, dv),
      upsert("tidesync_test_nodes", nNode, { list_id: u.userId, title: "n" }), upsert("tidesync_test_nodes", sNode, { parent_id: nNode }, sv),
    ]);
    expect(outcome(r)).toEqual(["applied", "applied", "applied", "applied"]);
    expect((await probe.admin`select parent_id, title from public.tidesync_test_nodes where id = ${sNode}`).map((x) => ({ ...x }))).toEqual([{ parent_id: nNode, title: "s2" }]);
  });

  it("a row put under a record an earlier op deleted (another synced table, or its own) is NOT_FOUND, as in the batch's order; put there before the delete, the cascade takes it", async () => {
    const u = await probe.newUser();
    const [project, kept, node, moved] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
    const seeded = await push(u, [
      upsert("tidesync_test_projects", project, { list_id: u.userId, name: "doomed" }),
      upsert("tidesync_test_projects", kept, { list_id: u.userId, name: "kept" }),
      upsert("tidesync_test_nodes", node, { list_id: u.userId, title: "doomed" }),
      upsert("tidesync_test_steps", moved, { list_id: u.userId, project_id: kept, note: "moved" }),
    ]);
    const [pv, , nv, mv] = seeded.results.map((r: any) => r.record.version);
    const [stepBefore, stepAfter, child] = [randomUUID(), randomUUID(), randomUUID()];
    const r = await push(u, [
      upsert("tidesync_test_steps", stepBefore, { list_id: u.userId, project_id: project, note: "before" }),
      upsert("tidesync_test_steps", moved, { note: "still moved" }, mv),
      remove("tidesync_test_projects", project, pv),
      remove("tidesync_test_nodes", node, nv),
      upsert("tidesync_test_steps", stepAfter, { list_id: u.userId, project_id: project, note: "after" }),
      upsert("tidesync_test_steps", moved, { project_id: project.toUpperCase() }, mv),
      upsert("tidesync_test_nodes", child, { list_id: u.userId, title: "child", parent_id: node }),
    ]);
    expect(outcome(r)).toEqual([
      "applied", "applied", "applied", "applied",
      `rejected NOT_FOUND no such tidesync_test_projects record ["/ops/4/data/project_id"]`,
      `rejected NOT_FOUND no such tidesync_test_projects record ["/ops/5/data/project_id"]`,
      `rejected NOT_FOUND no such tidesync_test_nodes record ["/ops/6/data/parent_id"]`,
    ]);
    // The step created before the delete went with its project (its result says so: deleted).
    expect(r.results[0].record).toMatchObject({ deleted: true, data: null });
    expect((await probe.admin`select note, project_id from public.tidesync_test_steps where list_id = ${u.userId}`).map((x) => ({ ...x }))).toEqual([{ note: "still moved", project_id: kept }]);
  });

  it("a unique value two ops take goes to the earlier: a create, then another create or a rename to it, is the later one refused", async () => {
    const u = await probe.newUser();
    const [a, b, c, d] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
    const twice = await push(u, [upsert("tidesync_test_items", a, { list_id: u.userId, name: "x" }), upsert("tidesync_test_items", b, { list_id: u.userId, name: "x", qty: 2 })]);
    expect(outcome(twice)).toEqual(["applied", expect.stringMatching(/^rejected VALIDATION_FAILED the value must be unique/)]);
    const seeded = await push(u, [upsert("tidesync_test_items", c, { list_id: u.userId, name: "c" })]);
    const renamed = await push(u, [upsert("tidesync_test_items", d, { list_id: u.userId, name: "y" }), upsert("tidesync_test_items", c, { name: "y" }, seeded.results[0].record.version)]);
    expect(outcome(renamed)).toEqual(["applied", expect.stringMatching(/^rejected VALIDATION_FAILED the value must be unique/)]);
  });

  it("at the quota, a delete of rows nothing refers to makes room for the batch's creates; a list's delete runs after them", async () => {
    const u = await probe.newUser();
    const [t, l, l2, inL2, t2] = [randomUUID(), randomUUID(), randomUUID(), randomUUID(), randomUUID()];
    const seeded = await push(u, [upsert("tasks", t, { list_id: u.userId, title: "t" }), upsert("lists", l2, { title: "l2" }), upsert("tasks", inL2, { list_id: l2, title: "in" })]);
    const [tv, l2v] = seeded.results.map((r: any) => r.record.version);
    await probe.admin`update app_private.sync_usage set live_records = ${MAX_LIVE_RECORDS_PER_USER} where user_id = ${u.userId}`;
    expect(outcome(await push(u, [remove("tasks", t, tv), upsert("lists", l, { title: "l" })]))).toEqual(["applied", "applied"]);
    const afterList = await push(u, [remove("lists", l2, l2v), upsert("tasks", t2, { list_id: u.userId, title: "t2" })]);
    expect(outcome(afterList)).toEqual(["applied", "rejected QUOTA_EXCEEDED at most " + MAX_LIVE_RECORDS_PER_USER + " live records per user; delete some first undefined"]);
  });
});

describe("and: a table's edits in one statement, a self-reference's creates in the batch's order", () => {
  it("a rename chain ('Bread' to 'Rye', 'Buns' to 'Bread'), a create, then another edit of the first: all applied", async () => {
    const u = await probe.newUser();
    const [bread, buns] = [randomUUID(), randomUUID()];
    const seeded = await push(u, [upsert("tidesync_test_items", bread, { list_id: u.userId, name: "Bread" }), upsert("tidesync_test_items", buns, { list_id: u.userId, name: "Buns" })]);
    const [breadVersion, bunsVersion] = seeded.results.map((r: any) => r.record.version);
    const r = await push(u, [
      upsert("tidesync_test_items", bread, { name: "Rye" }, breadVersion),
      upsert("tidesync_test_items", buns, { name: "Bread" }, bunsVersion),
      upsert("tidesync_test_items", randomUUID(), { list_id: u.userId, name: "Eggs" }),
      upsert("tidesync_test_items", bread, { qty: 2 }, breadVersion),
    ]);
    expect(outcome(r)).toEqual(["applied", "applied", "applied", "applied"]);
    expect((await probe.admin`select name, qty from public.tidesync_test_items where list_id = ${u.userId} order by name`).map((x) => ({ ...x })))
      .toEqual([{ name: "Bread", qty: null }, { name: "Eggs", qty: null }, { name: "Rye", qty: 2 }]);
  });

  it("an outline: a child under an existing node, a new top-level node, a child under it", async () => {
    const u = await probe.newUser();
    const [x, m1, n, m2] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
    await push(u, [upsert("tidesync_test_nodes", x, { list_id: u.userId, title: "x" })]);
    const r = await push(u, [
      upsert("tidesync_test_nodes", m1, { list_id: u.userId, title: "m1", parent_id: x }),
      upsert("tidesync_test_nodes", n, { list_id: u.userId, title: "n" }),
      upsert("tidesync_test_nodes", m2, { list_id: u.userId, title: "m2", parent_id: n }),
    ]);
    expect(outcome(r)).toEqual(["applied", "applied", "applied"]);
  });
});

describe("and: lists that refer to tasks too (a pinned task) are still created before their tasks", () => {
  let pinned: ProbeStack;
  beforeAll(async () => {
    pinned = await startProbeStack("rv_order_pinned", [
      `alter table public.lists add column tidesync_test_pinned_task_id uuid references public.tasks(id) on delete set null`,
    ]);
  }, 180_000);
  afterAll(async () => { await pinned?.stop(); });

  it("a task in the personal list, a new list, a task in it: raw push, and the real client offline", async () => {
    const u = await pinned.newUser();
    const [t0, l, t1] = [randomUUID(), randomUUID(), randomUUID()];
    const r = (await call("/v1/sync/batch", { method: "POST", token: u.token, baseUrl: pinned.apiUrl, body: { ops: [
      upsert("tasks", t0, { list_id: u.userId, title: "t0" }), upsert("lists", l, { title: "Groceries" }), upsert("tasks", t1, { list_id: l, title: "Milk" }),
    ] } })).body;
    expect(outcome(r)).toEqual(["applied", "applied", "applied"]);

    const client = await clientOf(pinned, u);
    await client.create("tasks", { list_id: u.userId, title: "Call mum" });
    const groceries = await client.create("lists", { title: "Groceries" });
    const milk = await client.create("tasks", { list_id: groceries, title: "Milk" });
    expect(await client.sync()).toMatchObject({ rejected: 0 });
    expect(await client.get("tasks", milk)).toMatchObject({ data: { list_id: groceries, title: "Milk" }, pending: false });
    await client.close();
  });
});

describe("cycles of non-scope tables, and writes whose policies read an edit made before them", () => {
  const editor = `list_id in (select unnest(app_private.my_list_ids('editor')))`;
  const notArchived = `not exists (select 1 from public.lists l where l.id = tidesync_test_guarded.list_id and l.archived)`;
  let stack: ProbeStack;
  beforeAll(async () => {
    stack = await startProbeStack("rv_order_cycle", [
      // Folders and their documents; a folder shows one of its documents as its cover.
      `create table public.tidesync_test_folders (id uuid primary key, list_id uuid not null references public.lists(id) on delete cascade, name text not null)`,
      `create table public.tidesync_test_documents (id uuid primary key, list_id uuid not null references public.lists(id) on delete cascade,
         folder_id uuid not null references public.tidesync_test_folders(id) on delete cascade, title text not null)`,
      `alter table public.tidesync_test_folders add column cover_id uuid references public.tidesync_test_documents(id) on delete set null`,
      ...likeTasks("tidesync_test_folders", ["name", "cover_id"]),
      `select app_private.enable_sync('public.tidesync_test_folders', 'list_id')`,
      ...likeTasks("tidesync_test_documents", ["folder_id", "title"]),
      `select app_private.enable_sync('public.tidesync_test_documents', 'list_id')`,
      // An item of an archived list cannot be added, changed, moved in or out, or removed (lists.archived is the sample app's own column).
      `create table public.tidesync_test_guarded (id uuid primary key, list_id uuid not null references public.lists(id) on delete cascade, name text not null)`,
      `alter table public.tidesync_test_guarded enable row level security`,
      `create policy "add" on public.tidesync_test_guarded for insert to authenticated with check (${editor} and ${notArchived})`,
      `create policy "change" on public.tidesync_test_guarded for update to authenticated using (${editor} and ${notArchived}) with check (${editor} and ${notArchived})`,
      `create policy "remove unless archived" on public.tidesync_test_guarded for delete to authenticated using (${editor} and ${notArchived})`,
      `create policy "read" on public.tidesync_test_guarded for select to authenticated using (list_id in (select unnest(app_private.my_list_ids('viewer'))))`,
      `grant select, delete on public.tidesync_test_guarded to authenticated`,
      `grant insert (id, list_id, name), update (id, list_id, name) on public.tidesync_test_guarded to authenticated`,
      `select app_private.enable_sync('public.tidesync_test_guarded', 'list_id')`,
    ]);
  }, 180_000);
  afterAll(async () => { await stack?.stop(); });

  it("a new folder and a new document in it, from the real client offline: both kept", async () => {
    const u = await stack.newUser();
    const client = await clientOf(stack, u);
    const folder = await client.create("tidesync_test_folders", { list_id: u.userId, name: "Taxes" });
    const document = await client.create("tidesync_test_documents", { list_id: u.userId, folder_id: folder, title: "2025 return" });
    expect(await client.sync()).toMatchObject({ rejected: 0 });
    expect(await client.get("tidesync_test_documents", document)).toMatchObject({ data: { folder_id: folder }, pending: false });
    await client.close();
  });

  it("a list un-archived, then one of its items removed, from the real client: both applied", async () => {
    const u = await stack.newUser();
    const client = await clientOf(stack, u);
    const item = await client.create("tidesync_test_guarded", { list_id: u.userId, name: "Milk" });
    await client.sync();
    await client.upsert("lists", u.userId, { archived: true });
    await client.sync();
    await client.upsert("lists", u.userId, { archived: false });
    await client.delete("tidesync_test_guarded", item);
    expect(await client.sync()).toMatchObject({ rejected: 0 });
    expect(await stack.admin`select id from public.tidesync_test_guarded where list_id = ${u.userId}`).toHaveLength(0);
    await client.close();
  });

  it("a list un-archived, an item moved into it, a task created, another list renamed, from the real client: all applied", async () => {
    const u = await stack.newUser();
    const client = await clientOf(stack, u);
    const old = await client.create("lists", { title: "Old" });
    const other = await client.create("lists", { title: "Other" });
    const milk = await client.create("tidesync_test_guarded", { list_id: u.userId, name: "Milk" });
    await client.sync();
    await client.upsert("lists", old, { archived: true });
    await client.sync();
    await client.upsert("lists", old, { archived: false });
    await client.upsert("tidesync_test_guarded", milk, { list_id: old });
    await client.create("tasks", { list_id: u.userId, title: "Call mum" });
    await client.upsert("lists", other, { title: "Other 2" });
    expect(await client.sync()).toMatchObject({ rejected: 0 });
    expect(await client.get("tidesync_test_guarded", milk)).toMatchObject({ data: { list_id: old }, pending: false });
    await client.close();
  });
});

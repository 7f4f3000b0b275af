// A foreign key's action (`on delete set null`, a list's cascade) is not the
// user's write into the referencing row's list (migration
// 20261128002000_referential_actions_not_rechecked, docs/security-model.md
// step 3). Bob deletes his own task and his own list, through the push and the
// Data API, while a row in a list he has left, or was never in, points at the
// task `on delete set null`; the row's reference is cleared and its list's
// members pull the change. Before, the recheck triggers judged Postgres's
// update of that row as Bob's write into its list: the push answered
// FORBIDDEN "you may not delete this record" and the Data API 42501, and both
// rows stayed.
//   - comments: an app's own table made by the docs' recipe (step 3's recheck
//     triggers, its guard: a comment points at a task of its own list, and
//     keeps the reference when the task moves out);
//   - tasks: a self-reference (subtasks) added to the sample's table, whose
//     recheck triggers are tidesync's own; no guard, so from any list.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call } from "../support/harness.ts";
import { type ProbeStack, type ProbeUser, startProbeStack } from "../support/probe-stack.ts";
import { remove, settled, upsert } from "../support/shared-lists.ts";

let probe: ProbeStack;
const editor = `list_id in (select unnest(app_private.my_list_ids('editor')))`;
const member = `list_id in (select unnest(app_private.my_list_ids('viewer')))`;
const taskOfTheList = `(ref_task is null or exists (select 1 from public.tasks t where t.id = tidesync_test_comments.ref_task and t.list_id = tidesync_test_comments.list_id))`;
const recheck = (event: "insert" | "update") =>
  `create trigger writer_role_rechecked_on_${event} after ${event} on public.tidesync_test_comments referencing new table as new_rows
     for each statement when (current_user = 'authenticated') execute function app_private.recheck_write_into_list('editor', 'list_id')`;

beforeAll(async () => {
  probe = await startProbeStack("referential_actions", [
    `alter table public.tasks add column tidesync_test_parent_id uuid references public.tasks (id) on delete set null`,
    `create index tidesync_test_tasks_parent_id_idx on public.tasks (tidesync_test_parent_id)`,
    `grant insert (tidesync_test_parent_id), update (tidesync_test_parent_id) on public.tasks to authenticated`,
    `create table public.tidesync_test_comments (id uuid primary key, list_id uuid not null references public.lists (id) on delete cascade,
       body text not null, ref_task uuid references public.tasks (id) on delete set null)`,
    `create index tidesync_test_comments_ref_task_idx on public.tidesync_test_comments (ref_task)`,
    `alter table public.tidesync_test_comments enable row level security`,
    `create policy "Members can read the comments of their lists" on public.tidesync_test_comments for select to authenticated using (${member})`,
    `create policy "Editors can add comments" on public.tidesync_test_comments for insert to authenticated with check (${editor} and ${taskOfTheList})`,
    `create policy "Editors can change comments" on public.tidesync_test_comments for update to authenticated using (${editor}) with check (${editor} and ${taskOfTheList})`,
    `create policy "Editors can delete comments" on public.tidesync_test_comments for delete to authenticated using (${editor})`,
    `grant select, delete on public.tidesync_test_comments to authenticated`,
    `grant insert (id, list_id, body, ref_task), update (id, list_id, body, ref_task) on public.tidesync_test_comments to authenticated`,
    recheck("insert"),
    recheck("update"),
    `select app_private.enable_sync('public.tidesync_test_comments', 'list_id')`,
    // A table of the app's, not synced, whose key to a task has no action: a pinned task stays.
    `create table public.tidesync_test_pins (id uuid primary key, task_id uuid not null references public.tasks (id))`,
    `create index tidesync_test_pins_task_id_idx on public.tidesync_test_pins (task_id)`,
    `alter table public.tidesync_test_pins enable row level security`,
    // A table of the app's whose key to a list has no action (a synced table's scope key may not:
    // npm run generate refuses it): a noted list stays. Each note is read by its author alone.
    `create table public.tidesync_test_notes (id uuid primary key, list_id uuid not null references public.lists (id), author uuid not null, body text not null)`,
    `create index tidesync_test_notes_list_id_idx on public.tidesync_test_notes (list_id)`,
    `alter table public.tidesync_test_notes enable row level security`,
    `create policy "Authors read their notes" on public.tidesync_test_notes for select to authenticated using (author = auth.uid())`,
    `grant select on public.tidesync_test_notes to authenticated`,
    // A key of tasks' own that a table of the app's refers to without an action (on update no action).
    `alter table public.tasks add column tidesync_test_code text unique`,
    `grant insert (tidesync_test_code), update (tidesync_test_code) on public.tasks to authenticated`,
    `create table public.tidesync_test_labels (id uuid primary key, task_code text not null references public.tasks (tidesync_test_code))`,
    `create index tidesync_test_labels_task_code_idx on public.tidesync_test_labels (task_code)`,
    `alter table public.tidesync_test_labels enable row level security`,
  ]);
}, 120_000);

afterAll(async () => {
  await probe?.stop();
});

interface Change { collection: string; id: string; version: number; deleted: boolean; data: Record<string, unknown> | null }

async function push(user: ProbeUser, ops: unknown[]): Promise<{ status: string; error?: { code: string; message: string } }[]> {
  const response = await call("/v1/sync/batch", { method: "POST", token: user.token, body: { ops }, baseUrl: probe.apiUrl });
  expect(response.status, response.text).toBe(200);
  return response.body.results;
}

/** Every record the user's device would hold, by id. */
async function pull(user: ProbeUser): Promise<Map<string, Change>> {
  await settled();
  const records = new Map<string, Change>();
  for (let cursor: string | undefined; ;) {
    const query = new URLSearchParams({ limit: "1000", ...(cursor ? { cursor } : {}) });
    const response = await call(`/v1/sync/changes?${query}`, { token: user.token, baseUrl: probe.apiUrl });
    expect(response.status, response.text).toBe(200);
    for (const change of response.body.changes as Change[]) records.set(change.id, change);
    cursor = response.body.cursor;
    if (!response.body.has_more) return records;
  }
}

/** A Data API call as the user (role authenticated + claims, one transaction). */
async function asUser(user: ProbeUser, sql: string, params: string[]): Promise<void> {
  await probe.admin.begin(async (tx) => {
    await tx`select set_config('request.jwt.claims', ${JSON.stringify({ sub: user.userId, role: "authenticated", session_id: user.sessionId })}, true),
                    set_config('role', 'authenticated', true)`;
    await tx.unsafe(sql, params);
  });
}

async function count(table: string, ids: string[]): Promise<number> {
  const [row] = await probe.admin.unsafe(`select count(*)::int as n from public.${table} where id = any ($1::uuid[])`, [ids]);
  return row.n;
}

const applied = (n: number) => Array.from({ length: n }, () => ({ status: "applied" }));

describe("a foreign key's action is not the user's write", () => {
  it("comments (the docs' recipe): Bob deletes his task and his list, both pointed at from a list he has left, through the push and the Data API", async () => {
    const [alice, bob] = [await probe.newUser(), await probe.newUser()];
    const [listA, listB, listC] = [randomUUID(), randomUUID(), randomUUID()];
    const [t1, t2, t3] = [randomUUID(), randomUUID(), randomUUID()];
    const [c1, c2, c3] = [randomUUID(), randomUUID(), randomUUID()];
    expect(await push(alice, [upsert("lists", listA, { title: "A" })])).toMatchObject(applied(1));
    await probe.admin`insert into public.list_members (list_id, user_id, role) values (${listA}, ${bob.userId}, 'editor')`;
    // Bob's tasks in Alice's list A; her comments there point at them (same list: the guard allows it).
    expect(await push(bob, [upsert("lists", listB, { title: "B" }), upsert("lists", listC, { title: "C" }),
      ...[t1, t2, t3].map((t) => upsert("tasks", t, { list_id: listA, title: "Bob's" }))])).toMatchObject(applied(5));
    expect(await push(alice, [[c1, t1], [c2, t2], [c3, t3]].map(([c, t]) => upsert("tidesync_test_comments", c, { list_id: listA, body: "about it", ref_task: t }))))
      .toMatchObject(applied(3));
    // Bob moves them into his lists B and C (the comments keep their references); Alice removes him from A.
    let bobs = await pull(bob);
    expect(await push(bob, [[t1, listB], [t2, listB], [t3, listC]].map(([t, list]) => upsert("tasks", t, { list_id: list }, bobs.get(t)!.version))))
      .toMatchObject(applied(3));
    await asUser(alice, `delete from public.list_members where list_id = $1 and user_id = $2`, [listA, bob.userId]);

    bobs = await pull(bob);
    expect(await push(bob, [remove("tasks", t1, bobs.get(t1)!.version)]), "his task").toMatchObject(applied(1));
    expect(await push(bob, [remove("lists", listB, bobs.get(listB)!.version)]), "his list, with t2").toMatchObject(applied(1));
    await asUser(bob, `delete from public.lists where id = $1`, [listC]);
    expect([await count("tasks", [t1, t2, t3]), await count("lists", [listB, listC])]).toEqual([0, 0]);

    const alices = await pull(alice);
    expect([c1, c2, c3].map((c) => alices.get(c)?.data)).toEqual([c1, c2, c3].map(() => expect.objectContaining({ list_id: listA, ref_task: null })));
  }, 60_000);

  it("tasks (the sample's own recheck): Bob deletes his task, and his list, which tasks in Alice's private list point at", async () => {
    const [alice, bob] = [await probe.newUser(), await probe.newUser()];
    const listB = randomUUID();
    const [t1, t2, t3] = [randomUUID(), randomUUID(), randomUUID()];
    const [s1, s2, s3] = [randomUUID(), randomUUID(), randomUUID()];
    expect(await push(bob, [upsert("lists", listB, { title: "B" }), upsert("tasks", t1, { list_id: bob.userId, title: "his" }),
      upsert("tasks", t2, { list_id: bob.userId, title: "his" }), upsert("tasks", t3, { list_id: listB, title: "his" })])).toMatchObject(applied(4));
    expect(await push(alice, [[s1, t1], [s2, t2], [s3, t3]].map(([s, t]) => upsert("tasks", s, { list_id: alice.userId, title: "sub", tidesync_test_parent_id: t }))))
      .toMatchObject(applied(3));

    const bobs = await pull(bob);
    expect(await push(bob, [remove("tasks", t1, bobs.get(t1)!.version)]), "his task").toMatchObject(applied(1));
    await asUser(bob, `delete from public.tasks where id = $1`, [t2]);
    expect(await push(bob, [remove("lists", listB, bobs.get(listB)!.version)]), "his list, with t3").toMatchObject(applied(1));
    expect(await count("tasks", [t1, t2, t3])).toBe(0);

    const alices = await pull(alice);
    expect([s1, s2, s3].map((s) => alices.get(s)?.data?.tidesync_test_parent_id)).toEqual([null, null, null]);
  }, 60_000);
});

describe("a foreign key without an action", () => {
  it("a push's delete of a record another row still refers to is rejected still_referenced on its record_id, not NOT_FOUND (the record exists), and the batch goes on", async () => {
    const bob = await probe.newUser();
    const [pinned, loose] = [randomUUID(), randomUUID()];
    expect(await push(bob, [upsert("tasks", pinned, { list_id: bob.userId, title: "pinned" }), upsert("tasks", loose, { list_id: bob.userId, title: "loose" })]))
      .toMatchObject(applied(2));
    await probe.admin`insert into public.tidesync_test_pins (id, task_id) values (${randomUUID()}, ${pinned})`;
    const bobs = await pull(bob);
    const results = await push(bob, [remove("tasks", pinned, bobs.get(pinned)!.version), remove("tasks", loose, bobs.get(loose)!.version)]);
    expect(results).toMatchObject([
      { status: "rejected", error: { code: "VALIDATION_FAILED", message: "other records still refer to this one (tidesync_test_pins_task_id_fkey)",
        details: [{ field: "/ops/0/record_id", code: "still_referenced" }] }, record: { id: pinned } },
      { status: "applied" },
    ]);
    expect(await count("tasks", [pinned, loose])).toBe(1);
  });
});

describe("a foreign key without an action, from rows the deleter cannot see", () => {
  it("a push's delete of a list that another user's note (hidden from the deleter) still refers to is rejected still_referenced on its record_id, naming the key and nothing of the note; the list and its tasks stay", async () => {
    const [alice, bob] = [await probe.newUser(), await probe.newUser()];
    const [list, task, note] = [randomUUID(), randomUUID(), randomUUID()];
    expect(await push(bob, [upsert("lists", list, { title: "Shared" }), upsert("tasks", task, { list_id: list, title: "in it" })])).toMatchObject(applied(2));
    await probe.admin`insert into public.tidesync_test_notes (id, list_id, author, body) values (${note}, ${list}, ${alice.userId}, 'alice-private-words')`;
    const bobs = await pull(bob);
    expect(bobs.has(note)).toBe(false);
    const response = await call("/v1/sync/batch", { method: "POST", token: bob.token, body: { ops: [remove("lists", list, bobs.get(list)!.version)] }, baseUrl: probe.apiUrl });
    expect(response.status, response.text).toBe(200);
    expect(response.body.results).toMatchObject([{
      status: "rejected",
      error: { code: "VALIDATION_FAILED", message: "other records still refer to this one (tidesync_test_notes_list_id_fkey)",
        details: [{ field: "/ops/0/record_id", code: "still_referenced", message: "is still referred to by other records (tidesync_test_notes_list_id_fkey)" }] },
      record: { id: list, deleted: false },
    }]);
    expect(response.text).not.toContain(note);
    expect(response.text).not.toContain("alice-private-words");
    expect(response.text).not.toContain(alice.userId);
    expect([await count("lists", [list]), await count("tasks", [task])]).toEqual([1, 1]);
  });
});

describe("a foreign key without an action on a key an update changes", () => {
  it("a push's update of a key another table's row still refers to is rejected still_referenced (not NOT_FOUND: nothing it refers to is missing); a reference of its own to a missing record stays NOT_FOUND", async () => {
    const bob = await probe.newUser();
    const [labelled, other] = [randomUUID(), randomUUID()];
    expect(await push(bob, [upsert("tasks", labelled, { list_id: bob.userId, title: "labelled", tidesync_test_code: `L-${labelled}` }),
      upsert("tasks", other, { list_id: bob.userId, title: "other" })])).toMatchObject(applied(2));
    await probe.admin`insert into public.tidesync_test_labels (id, task_code) values (${randomUUID()}, ${`L-${labelled}`})`;
    const bobs = await pull(bob);
    const results = await push(bob, [
      upsert("tasks", labelled, { tidesync_test_code: `M-${labelled}` }, bobs.get(labelled)!.version),
      upsert("tasks", other, { tidesync_test_parent_id: randomUUID() }, bobs.get(other)!.version),
    ]);
    expect(results).toMatchObject([
      { status: "rejected", error: { code: "VALIDATION_FAILED", message: "other records still refer to this one (tidesync_test_labels_task_code_fkey)",
        details: [{ field: "/ops/0/data", code: "still_referenced" }] }, record: { id: labelled, data: { tidesync_test_code: `L-${labelled}` } } },
      { status: "rejected", error: { code: "NOT_FOUND", message: "refers to a record that does not exist (tasks_tidesync_test_parent_id_fkey)",
        details: [{ field: "/ops/1/data/tidesync_test_parent_id", code: "not_found" }] } },
    ]);
  });
});

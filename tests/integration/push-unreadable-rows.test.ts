// A synced table whose SELECT policy hides a row its INSERT policy lets the
// caller write (or that has no SELECT policy at all): the push never keeps a
// row its writer cannot list, and one such op never blocks the batch
// (api-v1.md): it is rejected FORBIDDEN (not_readable_after_write), the
// batch's other ops apply, and the same batch sent again is answered from the
// ledger (the client's outbox drains).
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiResponse, call } from "../support/harness.ts";
import { type ProbeStack, type ProbeUser, startProbeStack, syncedLikeTasks } from "../support/probe-stack.ts";
import { upsert } from "../support/shared-lists.ts";

let probe: ProbeStack;
const editor = `list_id in (select unnest(app_private.my_list_ids('editor')))`;
const member = `list_id in (select unnest(app_private.my_list_ids('viewer')))`;

beforeAll(async () => {
  probe = await startProbeStack("unreadable", [
    // Members read only memos that are not hidden; editors may write hidden ones.
    `create table public.tidesync_test_memos (id uuid primary key, list_id uuid not null references public.lists (id) on delete cascade, body text, hidden boolean not null default false)`,
    `alter table public.tidesync_test_memos enable row level security`,
    `create policy "Editors can add memos" on public.tidesync_test_memos for insert to authenticated with check (${editor})`,
    `create policy "Editors can change memos" on public.tidesync_test_memos for update to authenticated using (${editor}) with check (${editor})`,
    `create policy "Editors can delete memos" on public.tidesync_test_memos for delete to authenticated using (${editor})`,
    `create policy "Members can read memos not hidden" on public.tidesync_test_memos for select to authenticated using (${member} and not hidden)`,
    `grant select, delete on public.tidesync_test_memos to authenticated`,
    `grant insert (id, list_id, body, hidden), update (id, list_id, body, hidden) on public.tidesync_test_memos to authenticated`,
    `select app_private.enable_sync('public.tidesync_test_memos', 'list_id')`,
    `create table public.tidesync_test_docs (id uuid primary key, list_id uuid not null references public.lists (id) on delete cascade, title text)`,
    ...syncedLikeTasks("tidesync_test_docs", ["title"]),
    // No SELECT policy: nothing written to it can be read back.
    `create table public.tidesync_test_nosel (id uuid primary key, list_id uuid not null references public.lists (id) on delete cascade, body text)`,
    ...syncedLikeTasks("tidesync_test_nosel", ["body"]).filter((s) => !s.includes("Members can read")),
  ]);
}, 120_000);

afterAll(async () => {
  await probe?.stop();
});

async function pushOps(user: ProbeUser, ops: unknown[]): Promise<ApiResponse> {
  return await call("/v1/sync/batch", { method: "POST", token: user.token, body: { ops }, baseUrl: probe.apiUrl });
}

async function stored(table: string, id: string): Promise<number> {
  const [row] = await probe.admin.unsafe(`select count(*)::int as c from public.${table} where id = $1`, [id]);
  return row.c;
}

const unreadable = (index: number) => ({
  code: "FORBIDDEN",
  message: "you may not make this change to this record",
  details: [{ field: `/ops/${index}/data`, code: "not_readable_after_write", message: expect.stringContaining("SELECT policy") }],
});

describe("a row the writer could not read once written", () => {
  it("a create the SELECT policy hides is rejected (not_readable_after_write) and not stored; the batch's other ops apply; sent again, it is answered from the ledger", async () => {
    const user = await probe.newUser();
    const doc = upsert("tidesync_test_docs", randomUUID(), { list_id: user.userId, title: "innocent bystander" });
    const hidden = upsert("tidesync_test_memos", randomUUID(), { list_id: user.userId, body: "born hidden", hidden: true });
    const shown = upsert("tidesync_test_memos", randomUUID(), { list_id: user.userId, body: "shown" });
    const first = await pushOps(user, [doc, hidden, shown]);
    expect(first.status).toBe(200);
    expect(first.body.results.map((r: { status: string }) => r.status)).toEqual(["applied", "rejected", "applied"]);
    expect(first.body.results[1]).toEqual({ op_id: hidden.op_id, status: "rejected", error: unreadable(1) });
    expect([await stored("tidesync_test_docs", doc.record_id), await stored("tidesync_test_memos", hidden.record_id), await stored("tidesync_test_memos", shown.record_id)]).toEqual([1, 0, 1]);

    const again = await pushOps(user, [doc, hidden, shown]);
    expect(again.status).toBe(200);
    expect(again.body.results.map((r: { status: string }) => r.status)).toEqual(["duplicate", "duplicate", "duplicate"]);
    expect(again.body.results[1]).toMatchObject({ original_status: "rejected", error: unreadable(1) });
  }, 60_000);

  it("a table with no SELECT policy: its create is rejected the same way, the task beside it applies", async () => {
    const user = await probe.newUser();
    const doc = upsert("tidesync_test_docs", randomUUID(), { list_id: user.userId, title: "beside" });
    const row = upsert("tidesync_test_nosel", randomUUID(), { list_id: user.userId, body: "hi" });
    const response = await pushOps(user, [row, doc]);
    expect(response.status).toBe(200);
    expect(response.body.results[0]).toEqual({ op_id: row.op_id, status: "rejected", error: unreadable(0) });
    expect(response.body.results[1].status).toBe("applied");
    expect([await stored("tidesync_test_nosel", row.record_id), await stored("tidesync_test_docs", doc.record_id)]).toEqual([0, 1]);
  }, 60_000);

  it("an update that hides its row stays refused by the database: FORBIDDEN with the record as it stands", async () => {
    const user = await probe.newUser();
    const memo = upsert("tidesync_test_memos", randomUUID(), { list_id: user.userId, body: "x" });
    const created = await pushOps(user, [memo]);
    const version = created.body.results[0].record.version;
    const hide = await pushOps(user, [upsert("tidesync_test_memos", memo.record_id, { hidden: true }, version)]);
    expect(hide.body.results[0]).toMatchObject({ status: "rejected", error: { code: "FORBIDDEN" }, record: { version, data: { hidden: false } } });
  }, 60_000);
});

// Schema changes of a synced table made while the function runs (docs/sync.md, "Changing a synced
// table"), through the real function on a stack of its own (probe-stack.ts).
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiResponse, call } from "../support/harness.ts";
import { type ProbeStack, type ProbeUser, startProbeStack, syncedLikeTasks } from "../support/probe-stack.ts";
import { upsert } from "../support/shared-lists.ts";

let probe: ProbeStack;
beforeAll(async () => {
  probe = await startProbeStack("schema_changes", [
    `create table public.tidesync_test_notes (id uuid primary key, list_id uuid not null references public.lists (id) on delete cascade, body text)`,
    ...syncedLikeTasks("tidesync_test_notes", ["body"]),
    `create table public.tidesync_test_events (id uuid primary key, list_id uuid not null references public.lists (id) on delete cascade, note text)`,
    ...syncedLikeTasks("tidesync_test_events", ["note"]),
  ]);
}, 120_000);
afterAll(async () => {
  await probe?.stop();
});

async function pushOps(user: ProbeUser, ops: unknown[]): Promise<ApiResponse> {
  return await call("/v1/sync/batch", { method: "POST", token: user.token, body: { ops }, baseUrl: probe.apiUrl });
}
async function pull(user: ProbeUser, collections: string | null, cursor?: string): Promise<ApiResponse> {
  const query = [collections && `collections=${collections}`, cursor && `cursor=${cursor}`].filter(Boolean).join("&");
  return await call(`/v1/sync/changes${query ? `?${query}` : ""}`, { token: user.token, baseUrl: probe.apiUrl });
}

describe("schema changes of a synced table", () => {
  it("disable_sync then enable_sync: a cursor from before gets 410 RESYNC_REQUIRED, and the full sync no longer lists what was deleted", async () => {
    const user = await probe.newUser();
    const keep = randomUUID();
    const gone = randomUUID();
    const pushed = await pushOps(user, [upsert("tidesync_test_notes", keep, { list_id: user.userId, body: "keep" }), upsert("tidesync_test_notes", gone, { list_id: user.userId, body: "gone" })]);
    expect(pushed.status).toBe(200);
    const first = await pull(user, "tidesync_test_notes");
    expect(first.body.changes.map((c: { id: string }) => c.id).sort()).toEqual([keep, gone].sort());
    const cursor = first.body.cursor as string;

    // A transaction older than the disable_sync still running: the pulls' snapshots have an xmin below it.
    const older = await probe.admin.reserve();
    await older`begin`;
    await older`select pg_current_xact_id()`;
    await probe.admin.unsafe(`select app_private.disable_sync('public.tidesync_test_notes')`);
    await probe.admin.unsafe(`delete from public.tidesync_test_notes where id = $1`, [gone]);
    await probe.admin.unsafe(`update public.tidesync_test_notes set body = 'edited while off' where id = $1`, [keep]);
    await probe.admin.unsafe(`select app_private.enable_sync('public.tidesync_test_notes', 'list_id')`);

    const after = await pull(user, "tidesync_test_notes", cursor);
    expect(after.status, after.text).toBe(410);
    expect(after.body.error.code).toBe("RESYNC_REQUIRED");
    const full = await pull(user, "tidesync_test_notes");
    expect(full.body.reset, full.text).toBe(true);
    expect(full.body.changes.map((c: { id: string; data: { body: string } }) => [c.id, c.data.body])).toEqual([[keep, "edited while off"]]);
    // The full sync's cursor is not refused (its snapshot saw the disable_sync), older transaction or not.
    const next = await pull(user, "tidesync_test_notes", full.body.cursor);
    expect(next.status, next.text).toBe(200);
    await older`rollback`;
    older.release();
  }, 60_000);

  it("a column renamed before the function is deployed again: that collection answers 503, the others work", async () => {
    const user = await probe.newUser();
    const event = randomUUID();
    expect((await pushOps(user, [upsert("tidesync_test_events", event, { list_id: user.userId, note: "before" })])).status).toBe(200);
    await probe.admin.unsafe(`alter table public.tidesync_test_events rename column note to body`);
    try {
      // The first request to meet the change needs only another collection: it works.
      const lists = await pull(user, "lists");
      expect(lists.status, lists.text).toBe(200);
      expect(lists.body.changes.map((c: { id: string }) => c.id)).toEqual([user.userId]);
      const all = await pull(user, null);
      expect(all.status, all.text).toBe(503);
      expect(all.body.error.code).toBe("UNAVAILABLE");
      expect(all.body.error.message).toContain("tidesync_test_events");
      expect(all.headers.get("retry-after")).toBe("60");
      expect((await pull(user, "tidesync_test_events")).status).toBe(503);
      const list = randomUUID();
      const pushedList = await pushOps(user, [upsert("lists", list, { title: "still works" })]);
      expect(pushedList.status, pushedList.text).toBe(200);
      expect(pushedList.body.results[0].status).toBe("applied");
      const pushedEvent = await pushOps(user, [upsert("tidesync_test_events", randomUUID(), { list_id: user.userId, note: "x" })]);
      expect(pushedEvent.status, pushedEvent.text).toBe(503);
    } finally {
      await probe.admin.unsafe(`alter table public.tidesync_test_events rename column body to note`);
    }
    // Undone, it works again without a deploy.
    const all = await pull(user, null);
    expect(all.status, all.text).toBe(200);
    expect(all.body.changes.find((c: { id: string }) => c.id === event).data.note).toBe("before");
    expect((await pushOps(user, [upsert("tidesync_test_events", randomUUID(), { list_id: user.userId, note: "after" })])).body.results[0].status).toBe("applied");
  }, 60_000);
});

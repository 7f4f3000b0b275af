// A pull page is bounded in bytes as well as in rows (limits.max_pull_page_bytes): a co-editor
// who fills a shared list with big records (legal ones, each under max_record_data_bytes) must
// not make every member's page tens of megabytes (a function killed by its memory limit on
// every pull, the device retrying the same page forever). The page ends after the entry that
// passes the budget; the cursor goes on right after it: every record arrives exactly once.
import { describe, expect, it } from "vitest";
import { changesResponseSchema } from "../../functions/_shared/schemas/sync.ts";
import { cursorPayload } from "../support/cursor-payload.ts";
import { call } from "../support/harness.ts";
import { asUser, pullAll, settled, sharedList } from "../support/shared-lists.ts";

const BUDGET = 4 * 1024 * 1024;
const BIG_TASKS = 300;
/** One big task's entry: a 10,000-char note of \u0001, 6 bytes each in JSON, and a 200-char title. */
const ENTRY_BYTES = 62 * 1024;

/**
 * Every page from `cursor` (none: a full sync, up to its last page, whose cursor is incremental)
 * at the default limit, with each body's size.
 */
async function pages(user: Parameters<typeof pullAll>[0], cursor?: string) {
  await settled();
  const full = cursor === undefined;
  const out: { bytes: number; changes: ReturnType<typeof changesResponseSchema.parse>["changes"] }[] = [];
  for (;;) {
    const response = await call(`/v1/sync/changes${cursor ? `?cursor=${encodeURIComponent(cursor)}` : ""}`, { token: user.token });
    expect(response.status, response.text.slice(0, 500)).toBe(200);
    const page = changesResponseSchema.parse(response.body);
    out.push({ bytes: Buffer.byteLength(response.text), changes: page.changes });
    cursor = page.cursor;
    if (!page.has_more || (full && cursorPayload(cursor).mode === "incremental")) return { pages: out, cursor };
  }
}

describe("a pull page's bytes", () => {
  it("GET /v1/meta publishes the budget", async () => {
    const meta = await call("/v1/meta");
    expect(meta.body.limits.max_pull_page_bytes).toBe(BUDGET);
  });

  it("a shared list of 300 tasks of ~60 KB: full and incremental pulls page by bytes, every task once", async () => {
    const { alice, bob, list } = await sharedList("editor");
    const before = await pullAll(alice);
    // bob, through the Data API: one statement
    await asUser(bob, (tx) => tx`insert into public.tasks (list_id, title, notes)
      select ${list}, repeat('x', 200), repeat(chr(1), 10000) from generate_series(1, ${BIG_TASKS})`);
    const tasks = (await asUser(alice, (tx) => tx<{ id: string }[]>`select id from public.tasks where list_id = ${list}`)).map((t) => t.id).sort();
    expect(tasks).toHaveLength(BIG_TASKS);

    for (const cursor of [undefined, before.cursor]) {
      const { pages: read } = await pages(alice, cursor);
      // ~18 MB: several pages, each within the budget and one record (and the envelope)
      expect(read.length).toBeGreaterThanOrEqual(Math.ceil((BIG_TASKS * 60_000) / (BUDGET + ENTRY_BYTES)));
      for (const page of read) {
        expect(page.bytes).toBeLessThan(BUDGET + ENTRY_BYTES + 1024);
        expect(page.changes.length).toBeGreaterThan(0);
      }
      const listed = read.flatMap((p) => p.changes).filter((c) => c.collection === "tasks").map((c) => c.id).sort();
      expect(listed).toEqual(tasks);
      for (const change of read.flatMap((p) => p.changes).filter((c) => c.collection === "tasks")) {
        expect((change.data as { notes: string }).notes).toBe("\u0001".repeat(10000));
      }
    }
  });
});

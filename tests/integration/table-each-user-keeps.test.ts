// docs/sync.md's "A table each user keeps to themselves", run as written (its table renamed
// tidesync_test_journal_entries): the usual Supabase table of a user's own rows (`user_id
// references auth.users`, policy `(select auth.uid()) = user_id`) made syncable by its user_id,
// which `npm run generate` refuses, then the migration that scopes it by each user's personal
// list. Generate takes the converted table, and the real function serves it: each user pulls
// their own rows (those the table held too), creates rows without naming a list, edits and
// deletes them; nobody else sees them. A row whose user owns no personal list fails the
// migration, as the docs say, until it is dealt with.
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readCheckedSyncCollections } from "../../scripts/generate/sync-collections.ts";
import { type ApiResponse, call } from "../support/harness.ts";
import { untilOpenTransactionsEnd } from "../support/open-transactions.ts";
import { type ProbeStack, type ProbeUser, startProbeStack } from "../support/probe-stack.ts";
import { remove, upsert } from "../support/shared-lists.ts";

const C = "tidesync_test_journal_entries";
const T = `public.${C}`;

/** The SQL blocks of docs/sync.md's "A table each user keeps to themselves", for public.tidesync_test_journal_entries. */
function recipe(): { before: string; conversion: string } {
  const doc = readFileSync(join(import.meta.dirname, "../../docs/sync.md"), "utf8");
  const section = doc.slice(doc.indexOf("\n### A table each user keeps to themselves"));
  const [before, conversion] = [...section.matchAll(/```sql\n([\s\S]*?)```/g)].map((m) => m[1].replaceAll(/\bjournal_entries/g, C));
  if (!conversion) throw new Error("docs/sync.md: no two SQL blocks under \"A table each user keeps to themselves\"");
  return { before, conversion };
}

let probe: ProbeStack;
let apiUrl: string;
let alice: ProbeUser;
let bob: ProbeUser;
let refusal: string;
let failedConversion: string;

beforeAll(async () => {
  probe = await startProbeStack("each_user_keeps", []);
  alice = await probe.newUser();
  bob = await probe.newUser();
  const carol = await probe.newUser();
  const { before, conversion } = recipe();
  await probe.admin.unsafe(before);
  // What the table held before: Alice's and Bob's rows, and Carol's, who has since deleted her personal list.
  await probe.admin.unsafe(`insert into ${T} (user_id, body) select $1::uuid, 'alice ' || g from generate_series(1, 3) g
                            union all select $2::uuid, 'bob ' || g from generate_series(1, 2) g
                            union all select $3::uuid, 'carol'`, [alice.userId, bob.userId, carol.userId]);
  await probe.admin`delete from public.lists where id = ${carol.userId}`;
  refusal = await readCheckedSyncCollections(probe.admin, () => {}).then(() => "accepted", (error) => error.message);
  // One migration, one transaction: it fails whole on Carol's row, then runs once her row is dealt with.
  failedConversion = await probe.admin.unsafe(conversion).then(() => "applied", (error) => `${error.code}: ${error.message}`);
  await probe.admin.unsafe(`delete from ${T} where user_id = $1`, [carol.userId]);
  await probe.admin.unsafe(conversion);
  apiUrl = (await probe.startServer()).apiUrl; // the function deployed after `npm run generate`
}, 240_000);

afterAll(async () => {
  await probe?.stop();
});

async function pushOps(user: ProbeUser, ops: unknown[]): Promise<ApiResponse> {
  return await call("/v1/sync/batch", { method: "POST", token: user.token, body: { ops }, baseUrl: apiUrl });
}

async function pullAll(user: ProbeUser, cursor?: string): Promise<{ changes: any[]; cursor: string }> {
  await untilOpenTransactionsEnd(probe.admin);
  const changes: any[] = [];
  for (;;) {
    const query = new URLSearchParams({ collections: C, ...(cursor ? { cursor } : {}) });
    const r = await call(`/v1/sync/changes?${query}`, { token: user.token, baseUrl: apiUrl });
    expect(r.status, r.text).toBe(200);
    changes.push(...r.body.changes);
    cursor = r.body.cursor;
    if (!r.body.has_more) return { changes, cursor: cursor! };
  }
}

describe("docs/sync.md: a table each user keeps to themselves", () => {
  it("npm run generate refuses the table synced by user_id, naming the statements of the docs' conversion", () => {
    expect(refusal).toContain(`${T}: its scope column user_id references auth.users, not a synced scope table`);
    const oneLine = (sql: string) => sql.replace(/\s+/g, " ").trim();
    const statements = refusal.split("\n").filter((line) => line.startsWith("  ") && !line.startsWith("  --")).map(oneLine);
    expect(statements).toHaveLength(5);
    for (const statement of statements) expect(oneLine(recipe().conversion)).toContain(statement);
  });

  it("the conversion fails on a row whose user owns no personal list, as the docs say, and takes the table once it is dealt with", async () => {
    expect(failedConversion).toBe(`23502: column "list_id" of relation "${C}" contains null values`);
    expect((await readCheckedSyncCollections(probe.admin, () => {})).map((c) => c.name)).toContain(C);
  });

  it("each user pulls their own rows, those the table held included, each at a version of its own, and nobody else's", async () => {
    const mine = await pullAll(alice);
    expect(mine.changes.map((c) => c.data.body).sort()).toEqual(["alice 1", "alice 2", "alice 3"]);
    expect(mine.changes.every((c) => c.data.list_id === alice.userId && c.data.user_id === alice.userId)).toBe(true);
    expect(new Set(mine.changes.map((c) => c.version)).size).toBe(3);
    expect((await pullAll(bob)).changes.map((c) => c.data.body).sort()).toEqual(["bob 1", "bob 2"]);
  });

  it("a push creates a row without naming a list (it lands in the writer's personal list), edits and deletes rows; a list named is refused", async () => {
    const { changes, cursor } = await pullAll(alice);
    const id = randomUUID();
    const created = await pushOps(alice, [upsert(C, id, { body: "written offline" })]);
    expect(created.body.results[0].status, created.text).toBe("applied");
    expect(created.body.results[0].record.data).toMatchObject({ list_id: alice.userId, user_id: alice.userId, body: "written offline" });
    const [first, second] = changes;
    const edited = await pushOps(alice, [upsert(C, first.id, { body: "edited" }, first.version), remove(C, second.id, second.version)]);
    expect(edited.body.results.map((r: any) => r.status), edited.text).toEqual(["applied", "applied"]);
    const moved = await pushOps(alice, [upsert(C, randomUUID(), { list_id: bob.userId, body: "elsewhere" })]);
    expect(moved.body.results[0].status).toBe("rejected");
    expect(moved.body.results[0].error).toMatchObject({ code: "VALIDATION_FAILED", details: [expect.objectContaining({ code: "read_only" })] });

    const next = await pullAll(alice, cursor);
    expect(next.changes.map((c) => [c.id, c.deleted ?? false]).sort()).toEqual([[id, false], [first.id, false], [second.id, true]].sort());
    expect((await pullAll(bob)).changes.map((c) => c.data.body).sort()).toEqual(["bob 1", "bob 2"]);
  });

  it("a Data API insert that leaves the list out lands in the writer's personal list", async () => {
    const claims = JSON.stringify({ sub: bob.userId, role: "authenticated", session_id: bob.sessionId });
    const [row] = await probe.admin.begin(async (tx) => {
      await tx`select set_config('request.jwt.claims', ${claims}, true), set_config('role', 'authenticated', true)`;
      return await tx.unsafe(`insert into ${T} (body) values ('from supabase-js') returning list_id, user_id`);
    });
    expect(row).toEqual({ list_id: bob.userId, user_id: bob.userId });
  });
});

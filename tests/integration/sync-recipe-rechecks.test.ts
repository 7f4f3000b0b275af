// docs/sync.md's "Making a table syncable" recipe, run as written in a database
// of its own (its table renamed tidesync_test_notes: the database holds an app's
// migrations, and an app that followed the recipe has public.tidesync_test_notes and its index
// already), makes a table whose writes are judged by the writer's role after
// the locks they waited for (docs/security-model.md, step 3). Alice removes
// Bob, an editor, from her list and holds her transaction open (it holds the
// list's row FOR UPDATE); Bob's insert of a note into the list passes its
// policy (his snapshot still shows him an editor), then its foreign-key check
// waits for her lock; she commits. Before, the recipe had no recheck triggers
// and his note landed in the list he had lost, counted in his quota.
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readCheckedSyncCollections } from "../../scripts/generate/sync-collections.ts";
import { createTempDatabase, type TempDatabase } from "../../scripts/lib/temp-database.ts";
import { insertAuthUser, signIn } from "../support/auth-users.ts";
import { holdTransaction, waitersOf } from "../support/held-transactions.ts";

/** The SQL block of docs/sync.md's "Making a table syncable", for public.tidesync_test_notes. */
function syncRecipe(): string {
  const doc = readFileSync(join(import.meta.dirname, "../../docs/sync.md"), "utf8");
  const section = doc.slice(doc.indexOf("\n## Making a table syncable"));
  const block = /```sql\n([\s\S]*?)```/.exec(section);
  if (!block) throw new Error("docs/sync.md: no SQL block under \"Making a table syncable\"");
  // Every name it gives starts "notes" (the table, its constraint and index, its policies' words).
  return block[1].replaceAll(/\bnotes/g, "tidesync_test_notes");
}

let database: TempDatabase;
let admin: postgres.Sql;

interface User { userId: string; sessionId: string; claims: string }

async function newUser(): Promise<User> {
  const userId = randomUUID();
  await insertAuthUser(admin, userId);
  const claims = await signIn(admin, userId);
  return { userId, sessionId: JSON.parse(claims).session_id, claims };
}

/** A Data API statement as the user (role authenticated with their claims, one transaction). */
async function asUser<T>(user: User, work: (tx: postgres.TransactionSql) => Promise<T>): Promise<T> {
  return await admin.begin(async (tx) => {
    await tx`select set_config('request.jwt.claims', ${user.claims}, true), set_config('role', 'authenticated', true)`;
    return await work(tx);
  }) as T;
}

beforeAll(async () => {
  database = await createTempDatabase("tidesync_recipe_rechecks", { seed: false });
  admin = postgres(database.adminDbUrl, { max: 4, onnotice: () => {} });
  await admin.unsafe(syncRecipe()); // one migration: one transaction
}, 240_000);

afterAll(async () => {
  await admin?.end({ timeout: 5 });
  await database?.drop();
});

/** Alice's list with Bob (and Carol) as editors. */
async function listWithEditors() {
  const [alice, bob, carol] = [await newUser(), await newUser(), await newUser()];
  const list = randomUUID();
  await asUser(alice, (tx) => tx`insert into public.lists (id, title) values (${list}, 'L')`);
  await admin`insert into public.list_members (list_id, user_id, role) values (${list}, ${bob.userId}, 'editor'), (${list}, ${carol.userId}, 'editor')`;
  return { alice, bob, carol, list };
}

/** Alice removes `member` and holds her transaction open while Bob adds a note (the test sees it wait); then she commits. */
async function whileAliceRemoves(alice: User, list: string, member: User, bob: User, note: string) {
  const held = holdTransaction((tx) => tx`delete from public.list_members where list_id = ${list} and user_id = ${member.userId}`,
    { as: alice, db: admin });
  let settled: Promise<{ ok: true } | { ok: false; error: { code?: string; message?: string } }> | undefined;
  try {
    await Promise.race([held.ran, held.done.then(() => { throw new Error("Alice's removal ended early"); })]);
    settled = asUser(bob, (tx) => tx`insert into public.tidesync_test_notes (id, list_id, body) values (${note}, ${list}, 'after removal')`)
      .then(() => ({ ok: true as const }), (error) => ({ ok: false as const, error }));
    await waitersOf(await held.pid);
  } finally {
    held.commit();
  }
  await held.done;
  return await settled!;
}

describe("docs/sync.md's recipe, as written: a write judged by the role after the locks it waited for", () => {
  it("Bob's note, added while Alice removed him, is refused 42501: nothing in her list, nothing in his quota", async () => {
    const { alice, bob, list } = await listWithEditors();
    const note = randomUUID();
    const out = await whileAliceRemoves(alice, list, bob, bob, note);
    expect(out).toMatchObject({
      ok: false,
      error: { code: "42501", message: `your role in list ${list} does not allow this write (as last committed: it may have changed while the write waited)` },
    });
    expect(await admin`select 1 from public.tidesync_test_notes where id = ${note}`).toHaveLength(0);
    expect(await admin`select coalesce(sum(live_records), 0)::int as n from app_private.sync_usage where user_id = ${bob.userId}`)
      .toEqual([{ n: 0 }]);
  });

  it("his note, added while Alice removed Carol, is kept (his role did not change)", async () => {
    const { alice, bob, carol, list } = await listWithEditors();
    const note = randomUUID();
    expect(await whileAliceRemoves(alice, list, carol, bob, note)).toEqual({ ok: true });
    expect(await admin`select list_id, created_by from public.tidesync_test_notes where id = ${note}`).toEqual([{ list_id: list, created_by: bob.userId }]);
  });
});

// Every check of `npm run generate` (its SELECT, RLS, scope key, created_by, id and delete grants,
// recheck triggers) passes the recipe as written: it is the table the refusals point to.
describe("docs/sync.md's recipe, as npm run generate reads it", () => {
  it("is taken, refused for nothing", async () => {
    const collections = await readCheckedSyncCollections(admin, () => {});
    expect(collections.find((c) => c.name === "tidesync_test_notes")).toMatchObject({ scope_column: "list_id", owner_column: "created_by" });
  });
});

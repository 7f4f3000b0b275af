// The push's lock, read and read-back statements run with generic plans, cached for a
// connection's life (push-store.ts GENERIC_PLANS_SQL). What a user would
// notice if such a plan were made while the tables were small: every later
// push slower as the tables grow, because the plan scans a whole table (or a
// user's whole ledger) where it should look rows up by key. So on a fresh,
// nearly empty database, every scan of those plans must be an index lookup
// by the row's key; the planner left to itself makes the scanning plans.
import { randomUUID } from "node:crypto";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { allCollections } from "../../functions/_shared/collections.ts";
import { GENERIC_PLANS_SQL, LOCK_SQL, READ_BACK_SQL, SCOPE_IN_ORDER_SQL, SCOPE_KEY_SHARE_SQL, STATE_SQL } from "../../functions/api/sync/push-store.ts";
import { createTempDatabase, type TempDatabase } from "../../scripts/lib/temp-database.ts";
import { insertAuthUser, signIn } from "../support/auth-users.ts";

let database: TempDatabase;
let admin: postgres.Sql;
const userId = randomUUID();
const taskId = randomUUID();
let claims: string;

beforeAll(async () => {
  database = await createTempDatabase("tidesync_pushplans", { seed: false });
  admin = postgres(database.adminDbUrl, { max: 1, onnotice: () => {} });
  await insertAuthUser(admin, userId);
  claims = await signIn(admin, userId);
  await admin`insert into public.tasks (id, list_id, title) values (${taskId}, ${userId}, 'milk')`;
  await admin`analyze`;
});

afterAll(async () => {
  await admin?.end({ timeout: 5 });
  await database?.drop();
});

// The sample's collections; an app's own are judged less strictly (below).
const SAMPLE = new Set(["lists", "list_members", "tasks"]);

/** What a scan of each table must look a row up by (its Index Cond), in these statements. */
const KEY_CONDITION: Record<string, RegExp> = {
  sync_ops: /op_id = /,
  sync_records: /\(id = /,
  sync_usage: /user_id = /,
  devices: /user_id = /,
  // An app's table: any index lookup. Its own select policy may lead the planner to the index the
  // policy names (docs/security-model.md's boards: created_by = the caller, the id a filter), a
  // lookup of the caller's rows that its policy, not the push, chose; a whole-table scan still fails.
  ...Object.fromEntries(allCollections().map((c) => [c.table.split(".")[1], SAMPLE.has(c.name) ? /\(id = / : /./])),
};

interface Scan {
  relation: string;
  node: string;
  indexCond: string;
}

/** Every scan of a table in the cached (generic) plan of `text`, prepared as the push prepares it. */
async function scansOf(text: string, args: string[], pinned: boolean): Promise<Scan[]> {
  const plan = await admin.begin(async (tx) => {
    await tx`select set_config('role', 'authenticated', true), set_config('request.jwt.claims', ${claims}, true)`;
    await tx.unsafe(pinned ? GENERIC_PLANS_SQL : `select set_config('plan_cache_mode', 'force_generic_plan', true)`);
    await tx.unsafe(`prepare probe as ${text}`);
    const [row] = await tx.unsafe<{ "QUERY PLAN": unknown }[]>(`explain (format json) execute probe(${args.map((a) => (a === "null" ? a : `'${a}'`)).join(", ")})`);
    await tx.unsafe(`deallocate probe`);
    return row["QUERY PLAN"];
  });
  const scans: Scan[] = [];
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(walk);
    if (typeof node !== "object" || node === null) return;
    const n = node as Record<string, unknown>;
    if (typeof n["Relation Name"] === "string") {
      scans.push({ relation: n["Relation Name"] as string, node: String(n["Node Type"]), indexCond: String(n["Index Cond"] ?? "") });
    }
    Object.values(n).forEach(walk);
  };
  walk(plan);
  return scans;
}

/** The scans that do not look rows up by key. */
const notByKey = (scans: Scan[]) => scans.filter((s) => !(s.node.startsWith("Index") && KEY_CONDITION[s.relation]?.test(s.indexCond)));

async function pushStatementScans(pinned: boolean): Promise<Scan[]> {
  const ids = `{${taskId}}`; // the statements take typed arrays
  const scans = [];
  for (const collection of allCollections()) {
    scans.push(...await scansOf(LOCK_SQL.get(collection.name)!, [ids], pinned));
    scans.push(...await scansOf(READ_BACK_SQL.get(collection.name)!, [ids], pinned));
  }
  // the scope's ids, then one id list per membership table of it
  for (const text of SCOPE_KEY_SHARE_SQL.values()) scans.push(...await scansOf(text, [ids], pinned));
  for (const text of SCOPE_IN_ORDER_SQL.values()) scans.push(...await scansOf(text, [...new Set(text.match(/\$\d+/g))].map(() => ids), pinned));
  const perCollection = allCollections().map(() => ids);
  scans.push(...await scansOf(STATE_SQL, [ids, "{tasks}", ids, "null", randomUUID(), ...perCollection], pinned));
  return scans;
}

describe("the push's cached plans", () => {
  it("look every row up by its key, even when made on a nearly empty database", async () => {
    const scans = await pushStatementScans(true);
    expect(scans.length).toBeGreaterThan(10);
    expect(scans.map((s) => s.relation)).toEqual(expect.arrayContaining(["tasks", "lists", "sync_ops", "sync_records", "sync_usage", "devices"]));
    expect(notByKey(scans)).toEqual([]);
  });

  it("(made as the planner would by itself, they scan whole tables: why the push pins them)", async () => {
    expect(notByKey(await pushStatementScans(false)).map((s) => s.relation)).toEqual(expect.arrayContaining(["tasks", "sync_ops", "sync_records"]));
  });
});

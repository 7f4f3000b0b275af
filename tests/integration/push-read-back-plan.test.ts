// The push reads its written rows back with a named prepared statement whose
// generic plan is cached for the connection's lifetime (push-store.ts
// READ_BACK_SQL). What a user would notice if that plan were made while the
// tables were small: every later push slower as the tables grow, since each
// row would be looked up by a sequential scan (a 500-op push 91 → 209 ms over
// 40,000 rows, docs/performance.md). So on a fresh, nearly empty database,
// the plan the push makes (sequential scans off, INDEX_LOOKUPS_SQL) looks
// rows up by index, where the planner left to itself would not.
import { randomUUID } from "node:crypto";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GENERIC_PLANS_SQL, INDEX_LOOKUPS_SQL, READ_BACK_SQL } from "../../functions/api/sync/push-store.ts";
import { createTempDatabase, type TempDatabase } from "../../scripts/lib/temp-database.ts";

let database: TempDatabase;
let admin: postgres.Sql;
const userId = randomUUID();
const taskId = randomUUID();

beforeAll(async () => {
  database = await createTempDatabase("tidesync_readback", { seed: false });
  admin = postgres(database.adminDbUrl, { max: 1, onnotice: () => {} });
  await admin`
    insert into auth.users (instance_id, id, aud, role, email, raw_app_meta_data, raw_user_meta_data, created_at, updated_at, is_anonymous)
    values ('00000000-0000-0000-0000-000000000000', ${userId}, 'authenticated', 'authenticated', ${`rb-${userId.slice(0, 8)}@test.tidesync.dev`},
            '{}', '{}', now(), now(), false)`;
  await admin`insert into public.tasks (id, list_id, title) values (${taskId}, ${userId}, 'milk')`;
  await admin`analyze`;
});

afterAll(async () => {
  await admin?.end({ timeout: 5 });
  await database?.drop();
});

/** Relations the read-back's cached (generic) plan scans sequentially, planned as the push plans it. */
async function seqScannedRelations(pinIndexScans: boolean): Promise<string[]> {
  const plan = await admin.begin(async (tx) => {
    await tx`select set_config('role', 'authenticated', true), set_config('request.jwt.claims', ${JSON.stringify({ sub: userId, role: "authenticated" })}, true)`;
    await tx.unsafe(GENERIC_PLANS_SQL);
    if (pinIndexScans) await tx.unsafe(INDEX_LOOKUPS_SQL);
    await tx.unsafe(`prepare read_back(text) as ${READ_BACK_SQL.get("tasks")}`);
    const [row] = await tx.unsafe<{ "QUERY PLAN": unknown }[]>(`explain (format json) execute read_back('${JSON.stringify([taskId])}')`);
    await tx.unsafe(`deallocate read_back`);
    return row["QUERY PLAN"];
  });
  const found: string[] = [];
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(walk);
    if (typeof node !== "object" || node === null) return;
    const n = node as Record<string, unknown>;
    if (n["Node Type"] === "Seq Scan") found.push(String(n["Relation Name"]));
    Object.values(n).forEach(walk);
  };
  walk(plan);
  return found.sort();
}

describe("the push's read-back of its written rows", () => {
  it("caches a plan that looks rows up by index, even when made on nearly empty tables", async () => {
    expect(await seqScannedRelations(true)).toEqual([]);
  });

  it("(left to itself the planner scans the small tables sequentially: why the push pins index scans)", async () => {
    expect(await seqScannedRelations(false)).not.toEqual([]);
  });
});

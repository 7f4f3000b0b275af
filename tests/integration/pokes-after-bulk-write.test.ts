// The pokes of a write (app_private.send_sync_pokes, after every statement that writes a
// synced table) look up each scope it touched among the deleted users' ids by key, however
// the connection's first write was. What a user would notice otherwise: on a connection whose
// first synced write was a bulk one (an import, one update across many lists, a big push:
// PostgREST and the function keep their connections), every later one-row write read all of
// app_private.retired_user_ids (one row per deleted account, kept for good). A plpgsql
// statement keeps the transition table's size of its first call on the connection, and the
// anti join with the deleted ids stayed planned as a hash join over the whole table
// (migration 20261128009100). Counted from the plans Postgres ran, never by time.
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTempDatabase, type TempDatabase } from "../../scripts/lib/temp-database.ts";
import { insertAuthUsers } from "../support/auth-users.ts";
import { allNodes, type Explained, inRolledBackTransaction, planRecorder } from "../support/explained.ts";

// Past ~35,000 deleted ids (random_page_cost 4) the planner probes by key anyway, since it
// never expects more than 200 distinct scopes in a transition table; below, the hash join
// is its choice for a first write of a few hundred rows or more.
const DELETED_USERS = 10_000;
const LISTS = 2_000;
const SCOPES = LISTS + 1; // and the owner's personal list

let database: TempDatabase;
let setup: postgres.Sql;
const connections: postgres.Sql[] = [];
let owner: string;

beforeAll(async () => {
  database = await createTempDatabase("tidesync_pokesbulk", { seed: false });
  setup = postgres(database.adminDbUrl, { max: 1, onnotice: () => {} });
  await setup`insert into app_private.retired_user_ids (user_id) select gen_random_uuid() from generate_series(1, ${DELETED_USERS}::integer)`;
  await setup`analyze app_private.retired_user_ids`;
  await insertAuthUsers(setup, 1, "lists-owner");
  [{ id: owner }] = await setup<{ id: string }[]>`select id from auth.users where email like 'lists-owner-%'`;
  await setup`insert into public.lists (title, created_by) select 'List ' || g, ${owner} from generate_series(1, ${LISTS}::integer) g`;
});

afterAll(async () => {
  await Promise.all([setup, ...connections].map((sql) => sql?.end({ timeout: 5 })));
  await database?.drop();
});

/** A new connection (as PostgREST's or the function's) whose statements' plans are recorded. */
function newConnection() {
  const recorder = planRecorder();
  const sql = postgres(database.adminDbUrl, { max: 1, onnotice: recorder.onnotice });
  connections.push(sql);
  return { sql, explainEach: recorder.explainEach };
}

/** One UPDATE of every list of the owner (their personal list too): each its own scope. */
const renameAllLists = (sql: postgres.Sql | postgres.TransactionSql) =>
  sql`update public.lists set title = title || '.' where created_by = ${owner}`;

/** One UPDATE of one list. */
const renameOneList = (sql: postgres.Sql | postgres.TransactionSql) =>
  sql`update public.lists set title = title || '.' where id = (select min(id::text)::uuid from public.lists where created_by = ${owner})`;

/**
 * What the pokes' statements (those that read the deleted ids: the trigger after the update of
 * sync_changes, and the one after its insert … on conflict, of no row here) read.
 */
function deletedIdReads(plans: Explained[]) {
  const pokes = plans.filter((explained) => explained["Query Text"].includes("app_private.retired_user_ids"));
  expect(pokes.length, "send_sync_pokes looked the scopes up among the deleted ids").toBeGreaterThan(0);
  const nodes = pokes.flatMap((explained) => allNodes(explained.Plan));
  const reads = nodes.filter((node) => node["Relation Name"] === "retired_user_ids");
  return {
    nodes,
    types: [...new Set(reads.map((node) => node["Node Type"]))],
    // rows read, over every loop (a probe that finds nothing reads none)
    rows: reads.reduce((sum, node) => sum + ((node["Actual Rows"] ?? 0) + (node["Rows Removed by Filter"] ?? 0)) * (node["Actual Loops"] ?? 1), 0),
    probes: reads.reduce((sum, node) => sum + (node["Actual Loops"] ?? 1), 0),
  };
}

/** The owner's lists this transaction poked. */
async function pokedLists(tx: postgres.TransactionSql): Promise<number> {
  const [{ topics }] = await tx<{ topics: number }[]>`
    select count(distinct m.topic)::integer as topics from realtime.messages m
     where m.inserted_at = localtimestamp -- now(): this transaction's
       and m.topic in (select 'tidesync:scope:' || l.id from public.lists l where l.created_by = ${owner})`;
  return topics;
}

describe("the pokes of a write", () => {
  it("look a one-row write's scope up among the deleted ids by key after a bulk write on the connection", async () => {
    const { sql, explainEach } = newConnection();
    // The connection's first synced write touches every list (the transition table's size stays).
    await renameAllLists(sql);
    await inRolledBackTransaction(sql, async (tx) => {
      const plans = await explainEach(tx, true, () => renameOneList(tx));
      const reads = deletedIdReads(plans);
      // One probe of the primary key for the one scope, not a scan of the 10,000 ids.
      expect(reads.rows).toBe(0);
      expect(reads.types.filter((type) => !/^Index (Only )?Scan$/.test(type ?? ""))).toEqual([]);
      expect(reads.probes).toBe(1);
      expect(await pokedLists(tx)).toBe(1);
    });
  });

  it("look a bulk write's scopes up once each after a one-row write on the connection", async () => {
    const { sql, explainEach } = newConnection();
    await renameOneList(sql);
    await inRolledBackTransaction(sql, async (tx) => {
      const plans = await explainEach(tx, true, () => renameAllLists(tx));
      const reads = deletedIdReads(plans);
      // A probe per scope at most (linear), and the statement's rows read once.
      expect(reads.probes).toBeLessThanOrEqual(SCOPES);
      expect(reads.rows).toBe(0);
      const scans = reads.nodes.filter((node) => node["Node Type"] === "Named Tuplestore Scan");
      expect(scans.filter((node) => (node["Actual Loops"] ?? 1) > 1)).toEqual([]);
      expect(await pokedLists(tx)).toBe(SCOPES);
    });
  });
});

// A stack of its own for synced tables the sample app does not have (json,
// jsonb, arrays, enums, numeric, bigint columns): a database with the
// product's schema (no seed) in which the test makes its table syncable, and
// a real Deno functions server that knows that table (startServer adds another,
// as a deploy after a migration would). A server knows its collections only
// from functions/_shared/sync-collections.generated.ts, so each runs with a copy of the function's deno.json whose import map
// points that module at a file written from the test's database exactly as
// `npm run generate` writes it (readSyncCollections, syncCollectionsSource).
// Nothing of the product's tree is changed.
import { randomUUID } from "node:crypto";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";
import postgres from "postgres";
import type { GeneratedCollection } from "../../functions/_shared/sync-collection-types.ts";
import { readSyncCollections, syncCollectionsSource } from "../../scripts/generate/sync-collections.ts";
import { ROOT } from "../../scripts/lib/paths.ts";
import { createTempDatabase } from "../../scripts/lib/temp-database.ts";
import { insertAuthUser } from "./auth-users.ts";
import { type FunctionsServer, startFunctionsServer } from "./functions-server.ts";
import { stack } from "./harness.ts";
import { functionsEnvFor } from "./test-stack.ts";
import { signEs256, supabaseClaims } from "./tokens.ts";

export interface ProbeUser {
  userId: string;
  sessionId: string;
  token: string;
}

export interface ProbeStack {
  /** Superuser connection to the probe database. */
  admin: postgres.Sql;
  /** Where the probe server's `api` function answers (…/functions/v1/api). */
  apiUrl: string;
  /** The servers' TIDESYNC_CURSOR_SECRET (a test ages a cursor the server issued). */
  cursorSecret: string;
  /** The collections the probe server was started with, as the generator read them. */
  collections: GeneratedCollection[];
  /** The probe server's log (one JSON line per request: tests/support/request-log.ts). */
  logFile: string;
  /**
   * Another functions server on the same database, generated from it as it is now (a deploy of the
   * function after a migration); stopped with the stack.
   */
  startServer(): Promise<{ apiUrl: string }>;
  /** A user with a session on the probe database (their personal list's id is their user id). */
  newUser(): Promise<ProbeUser>;
  stop(): Promise<void>;
}

const generatedModule = pathToFileURL(path.join(ROOT, "functions/_shared/sync-collections.generated.ts")).href;
const typesModule = pathToFileURL(path.join(ROOT, "functions/_shared/sync-collection-types.ts")).href;

/** Starts a probe stack whose database ran `setup` (as superuser) before its collections were read. */
export async function startProbeStack(name: string, setup: readonly string[]): Promise<ProbeStack> {
  const database = await createTempDatabase(`tidesync_${name}`, { seed: false });
  const admin = postgres(database.adminDbUrl, { max: 2, onnotice: () => {} });
  const root = path.join(ROOT, ".cache", "test-collections", database.name);
  const env = functionsEnvFor(database.ownerDbUrl, stack.keys);
  const servers: FunctionsServer[] = [];
  const stop = async () => {
    for (const server of servers) await server.stop();
    await admin.end({ timeout: 5 });
    await database.drop();
    await rm(root, { recursive: true, force: true });
    await rm(env.TIDESYNC_LOCAL_STORAGE_DIR, { recursive: true, force: true });
  };
  /** A server whose collections are the database's as the generator reads them now. */
  const startServer = async () => {
    const collections = await readSyncCollections(admin);
    const dir = path.join(root, String(servers.length));
    await mkdir(dir, { recursive: true });
    const generated = path.join(dir, "sync-collections.generated.ts");
    await writeFile(generated, syncCollectionsSource(collections).replace('"./sync-collection-types.ts"', JSON.stringify(typesModule)));
    const config = JSON.parse(await readFile(path.join(ROOT, "functions/api/deno.json"), "utf8"));
    config.imports[generatedModule] = pathToFileURL(generated).href;
    await writeFile(path.join(dir, "deno.json"), JSON.stringify(config, null, 2));
    const server = await startFunctionsServer(env, { name: `${database.name}-${servers.length}`, denoConfig: path.join(dir, "deno.json") });
    servers.push(server);
    return { apiUrl: server.apiUrl, collections, logFile: server.logFile };
  };
  let first: { apiUrl: string; collections: GeneratedCollection[]; logFile: string };
  try {
    for (const statement of setup) await admin.unsafe(statement);
    first = await startServer();
  } catch (error) {
    await stop().catch(() => {});
    throw error;
  }
  return {
    admin,
    apiUrl: first.apiUrl,
    cursorSecret: env.TIDESYNC_CURSOR_SECRET,
    collections: first.collections,
    logFile: first.logFile,
    startServer: async () => ({ apiUrl: (await startServer()).apiUrl }),
    async newUser() {
      const userId = randomUUID();
      const sessionId = randomUUID();
      const email = await insertAuthUser(admin, userId);
      await admin`
        insert into auth.sessions (id, user_id, aal, created_at, updated_at, user_agent)
        values (${sessionId}, ${userId}, 'aal1', now(), now(), 'tidesync probe tests')`;
      return { userId, sessionId, token: await signEs256(stack.keys.privateJwk, supabaseClaims({ userId, sessionId, email })) };
    },
    stop,
  };
}

/**
 * SQL that makes `public.<table>` (already created with a uuid `id` and a `list_id` referencing
 * public.lists) a table members read and editors write, like public.tasks, not yet synced.
 */
export function likeTasks(table: string, columns: readonly string[]): string[] {
  const t = `public.${table}`;
  const editor = `list_id in (select unnest(app_private.my_list_ids('editor')))`;
  const member = `list_id in (select unnest(app_private.my_list_ids('viewer')))`;
  return [
    `alter table ${t} enable row level security`,
    `create policy "Editors can add ${table}" on ${t} for insert to authenticated with check (${editor})`,
    `create policy "Editors can change ${table}" on ${t} for update to authenticated using (${editor}) with check (${editor})`,
    `create policy "Editors can delete ${table}" on ${t} for delete to authenticated using (${editor})`,
    `create policy "Members can read ${table}" on ${t} for select to authenticated using (${member})`,
    `grant select, delete on ${t} to authenticated`,
    `grant insert (id, list_id, ${columns.join(", ")}), update (id, list_id, ${columns.join(", ")}) on ${t} to authenticated`,
  ];
}

/** likeTasks, and the table made syncable. */
export function syncedLikeTasks(table: string, columns: readonly string[]): string[] {
  return [...likeTasks(table, columns), `select app_private.enable_sync('public.${table}', 'list_id')`];
}

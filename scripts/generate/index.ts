// `npm run generate`: every generated artifact, from one temporary database.
//   docs/openapi.json            the api function's OpenAPI 3.1 document
//   supabase/types/database.ts   supabase gen types typescript, writes cut to authenticated's privileges
//   sql/                         reference schema for DBA review
//   supabase/seed.sql            the sample seed, from fixtures/
//   functions/_shared/sync-collections.generated.ts   the synced tables, from the database
//   functions/_shared/sync-ledger.generated.ts        the op ledger's bound on a stored error, from its check
//   functions/_shared/sync-quota.generated.ts         the live-records quota, from app_private.max_live_records_per_user()
//   functions/_shared/release-limits.generated.ts     the feedback cap, from app_private.max_feedback_per_user_and_release()
//   functions/_shared/time-zone-names.generated.ts    the IANA tz database's names as spelled there
// `npm run generate:check` (--check) regenerates into a temporary directory
// and fails, listing them, when committed files are stale, missing or extra.
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import postgres from "postgres";
import { ROOT } from "../lib/paths.ts";
import { checkPostgres, reportProblems } from "../lib/prerequisites.ts";
import { ourSchemas } from "../lib/our-schemas.ts";
import { runCleanups } from "../lib/shutdown.ts";
import { createTempDatabase, TEST_ADMIN_URL } from "../lib/temp-database.ts";
import { buildSeed } from "../seed/build-seed.ts";
import { generateDbTypes } from "./db-types.ts";
import { generateOpenApi } from "./openapi.ts";
import { generateReferenceSchema } from "./reference-schema.ts";
import { readFeedbackCap, releaseLimitsSource } from "./release-limits.ts";
import { SyncTableRefusal } from "./sync-collection-checks.ts";
import { readCheckedSyncCollections, syncCollectionsSource } from "./sync-collections.ts";
import { readOpErrorBound, syncLedgerSource } from "./sync-ledger.ts";
import { readLiveRecordsQuota, syncQuotaSource } from "./sync-quota.ts";
import { readTimeZoneNames, timeZoneNamesSource } from "./time-zone-names.ts";

/** Directories owned entirely by the generator: files in them that it no longer produces are stale. */
const OWNED_DIRS = ["sql"];

/** Every generated file, keyed by its path relative to the repository root. */
export async function generateAll(log: (line: string) => void = () => {}): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  files.set("docs/openapi.json", await generateOpenApi());
  files.set("supabase/seed.sql", await buildSeed());
  files.set("functions/_shared/time-zone-names.generated.ts", timeZoneNamesSource(await readTimeZoneNames()));

  const started = Date.now();
  const db = await createTempDatabase("tidesync_gen", { seed: false });
  log(`generate: database ${db.name} set up in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  try {
    const sql = postgres(db.adminDbUrl, { max: 1, onnotice: () => {} });
    try {
      const schemas = await ourSchemas(sql);
      files.set("supabase/types/database.ts", await generateDbTypes(sql, db.ownerDbUrl, schemas));
      files.set("functions/_shared/sync-collections.generated.ts", syncCollectionsSource(await readCheckedSyncCollections(sql)));
      files.set("functions/_shared/sync-ledger.generated.ts", syncLedgerSource(await readOpErrorBound(sql)));
      files.set("functions/_shared/sync-quota.generated.ts", syncQuotaSource(await readLiveRecordsQuota(sql)));
      files.set("functions/_shared/release-limits.generated.ts", releaseLimitsSource(await readFeedbackCap(sql)));
      for (const [file, text] of await generateReferenceSchema(sql)) files.set(`sql/${file}`, text);
    } finally {
      await sql.end();
    }
  } finally {
    await db.drop();
  }
  return files;
}

async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(path.join(ROOT, dir), { withFileTypes: true, recursive: true }).catch(() => []);
  return entries
    .filter((e) => e.isFile())
    .map((e) => path.relative(ROOT, path.join(e.parentPath, e.name)))
    .sort();
}

async function writeAll(files: Map<string, string>, root: string): Promise<void> {
  for (const [file, text] of files) {
    await mkdir(path.dirname(path.join(root, file)), { recursive: true });
    await writeFile(path.join(root, file), text);
  }
}

/** Committed files that differ from `files`, are missing, or are no longer generated. */
export async function staleFiles(files: Map<string, string>): Promise<string[]> {
  const stale: string[] = [];
  for (const [file, text] of files) {
    const current = await readFile(path.join(ROOT, file), "utf8").catch(() => undefined);
    if (current === undefined) stale.push(`${file} (missing)`);
    else if (current !== text) stale.push(`${file} (differs)`);
  }
  for (const dir of OWNED_DIRS) {
    for (const file of await listFiles(dir)) if (!files.has(file)) stale.push(`${file} (no longer generated)`);
  }
  return stale;
}

async function main(): Promise<number> {
  const check = process.argv.includes("--check");
  if (!reportProblems(await checkPostgres(TEST_ADMIN_URL, { needPgtap: false }))) return 2;
  const files = await generateAll(console.log);

  if (check) {
    const tmp = await mkdtemp(path.join(os.tmpdir(), "tidesync-generate-"));
    try {
      await writeAll(files, tmp);
      const stale = await staleFiles(files);
      if (stale.length > 0) {
        console.error(`generate:check: ${stale.length} generated file(s) are stale; run \`npm run generate\` and commit:`);
        for (const line of stale) console.error(`  ${line}`);
        return 1;
      }
      console.log(`generate:check: ${files.size} generated files are up to date`);
      return 0;
    } finally {
      await rm(tmp, { recursive: true, force: true });
    }
  }

  for (const dir of OWNED_DIRS) {
    for (const file of await listFiles(dir)) if (!files.has(file)) await rm(path.join(ROOT, file));
  }
  await writeAll(files, ROOT);
  console.log(`generate: wrote ${files.size} files (docs/openapi.json, supabase/types/database.ts, sql/, supabase/seed.sql)`);
  return 0;
}

/**
 * What generate prints when it fails: a refusal of the synced tables as its message alone (what
 * to change, not where in generate it was found), anything else with its stack.
 */
export function generateFailure(error: unknown): string {
  if (error instanceof SyncTableRefusal) {
    return `npm run generate refuses the synced tables of supabase/migrations (it wrote nothing):\n${error.message}`;
  }
  return error instanceof Error ? error.stack ?? error.message : String(error);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().then(
    (code) => process.exit(code),
    async (error) => {
      console.error(generateFailure(error));
      await runCleanups();
      process.exit(1);
    },
  );
}

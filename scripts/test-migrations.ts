// `npm run test:migrations`: the migrations are reversible and append-only.
//   1. every supabase/migrations/<stem>.sql has supabase/rollbacks/<stem>.down.sql, and vice versa;
//   2. append-only: no migration committed before the baseline was modified,
//      renamed or deleted (scripts/migrations/append-only-guard.ts);
//   3. the round trip, on a fresh database prepared like the others (the
//      stand-in, then every migration through the real CLI as the
//      non-superuser owner role):
//      - each down step, newest to oldest, runs as the owner role (and its row
//        leaves supabase_migrations.schema_migrations, so the CLI agrees);
//        a down step with data to keep a promise about is checked on seeded
//        rows (scripts/migrations/down-step-data-checks.ts);
//      - at the end nothing of ours remains: the catalog equals the snapshot
//        taken right after the stand-in alone;
//      - the CLI then applies the migrations again one at a time, and after
//        each the catalog equals what rolling back to that point left, and in
//        the end what the first application made.
//   4. the local-stack scripts as a developer runs them (scripts/local-stack-checks.ts).
//   --summary=<file>   also write {"passed": n, "failed": n} (used by `npm test`)
import { cp, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import postgres from "postgres";
import { applyStandin, dropDatabase, OWNER_ROLE, provisionDatabase, pushMigrations, withDatabase } from "./db/database.ts";
import { localStackChecks } from "./local-stack-checks.ts";
import { checkAppendOnly, MIGRATIONS_DIR } from "./migrations/append-only-guard.ts";
import { DOWN_STEP_DATA_CHECKS } from "./migrations/down-step-data-checks.ts";
import { catalogSnapshot, leftBy, snapshotDiff } from "./migrations/catalog-snapshot.ts";
import { ROOT } from "./lib/paths.ts";
import { checkPostgres, reportProblems } from "./lib/prerequisites.ts";
import { onShutdown, runCleanups } from "./lib/shutdown.ts";
import { TEST_ADMIN_URL, temporaryDatabaseName } from "./lib/temp-database.ts";

export const ROLLBACKS_DIR = "supabase/rollbacks";
const DOWN_SUFFIX = ".down.sql";

let passed = 0;
let failed = 0;

function report(ok: boolean, name: string, detail?: string): boolean {
  if (ok) passed++;
  else failed++;
  console.log(`${ok ? "ok  " : "FAIL"}  ${name}${detail ? `\n${detail.replace(/^/gm, "        ")}` : ""}`);
  return ok;
}

/** The differing catalog lines (each starts with the object's kind and name: catalog-snapshot.ts), - only in `expected`, + only in `actual`. */
function diffLines(expected: string[], actual: string[]): string[] {
  const { missing, extra } = snapshotDiff(expected, actual);
  return [...missing.map((l) => `- ${l}`), ...extra.map((l) => `+ ${l}`)];
}

function reportDiff(name: string, legend: string, lines: string[]): boolean {
  return report(lines.length === 0, name, lines.length === 0 ? undefined : [legend, ...lines.slice(0, 40)].join("\n"));
}

async function stems(dir: string, suffix: string): Promise<string[]> {
  return (await readdir(path.join(ROOT, dir))).filter((n) => n.endsWith(suffix)).map((n) => n.slice(0, -suffix.length)).sort();
}

/** A CLI workdir holding only the first `count` migrations (and the project's config). */
async function workdirWith(base: string, migrations: string[], count: number): Promise<string> {
  const workdir = path.join(base, `first-${count}`);
  await mkdir(path.join(workdir, MIGRATIONS_DIR), { recursive: true });
  await cp(path.join(ROOT, "supabase/config.toml"), path.join(workdir, "supabase/config.toml"));
  for (const stem of migrations.slice(0, count)) {
    await cp(path.join(ROOT, MIGRATIONS_DIR, `${stem}.sql`), path.join(workdir, MIGRATIONS_DIR, `${stem}.sql`));
  }
  return workdir;
}

async function roundTrip(migrations: string[]): Promise<void> {
  const name = temporaryDatabaseName("tidesync_migrations");
  const drop = onShutdown(() => dropDatabase(TEST_ADMIN_URL, name));
  const scratch = await mkdtemp(path.join(os.tmpdir(), "tidesync-migrations-"));
  const ownerUrl = await provisionDatabase(TEST_ADMIN_URL, name, { recreate: true });
  const adminSql = postgres(withDatabase(TEST_ADMIN_URL, name), { max: 1, onnotice: () => {} });
  const ownerSql = postgres(ownerUrl, { max: 1, onnotice: () => {} });
  try {
    await applyStandin(withDatabase(TEST_ADMIN_URL, name), OWNER_ROLE);
    const standinOnly = await catalogSnapshot(adminSql);
    await pushMigrations(ownerUrl);
    const firstApplication = await catalogSnapshot(adminSql);
    report(firstApplication.length > standinOnly.length, `the CLI applied ${migrations.length} migrations as ${OWNER_ROLE}`);

    // afterRollback[k]: the catalog when only the first k migrations remain.
    const afterRollback: string[][] = [];
    afterRollback[migrations.length] = firstApplication;
    for (let k = migrations.length - 1; k >= 0; k--) {
      const stem = migrations[k];
      const down = await readFile(path.join(ROOT, ROLLBACKS_DIR, `${stem}${DOWN_SUFFIX}`), "utf8");
      const dataChecks = DOWN_STEP_DATA_CHECKS.filter((c) => c.stem === stem);
      for (const c of dataChecks) await adminSql.unsafe(c.seed);
      try {
        await ownerSql.begin(async (tx) => {
          await tx.unsafe(down);
          await tx`delete from supabase_migrations.schema_migrations where version = ${stem.split("_")[0]}`;
        });
        report(true, `down step ${stem} runs as ${OWNER_ROLE}`);
        for (const c of dataChecks) {
          const [row] = await adminSql.unsafe<{ ok: boolean; detail: string }[]>(c.check);
          report(row?.ok === true, `down step ${stem}: ${c.name}`, row?.ok === true ? undefined : row?.detail);
        }
      } catch (error) {
        report(false, `down step ${stem} runs as ${OWNER_ROLE}`, (error as Error).message);
        return; // later down steps would fail for this one's leftovers
      }
      afterRollback[k] = await catalogSnapshot(adminSql);
    }
    reportDiff("after every down step nothing of ours remains (catalog = the stand-in alone)",
      "- only after the stand-in alone, + only after every down step:", diffLines(standinOnly, afterRollback[0]));

    const diffs: string[][] = [];
    for (let k = 1; k <= migrations.length; k++) {
      await pushMigrations(ownerUrl, await workdirWith(scratch, migrations, k));
      diffs[k] = diffLines(afterRollback[k], await catalogSnapshot(adminSql));
      if (k === migrations.length) {
        reportDiff("applied again by the CLI, the schema equals the first application",
          "- only after the first application, + only applied again:", diffs[k]);
      } else {
        reportDiff(`re-applied up to ${migrations[k - 1]}, the schema equals the rollback to that point`,
          `- only after down step ${migrations[k]} (or a newer one: see the summary below), + only after re-applying:`, diffs[k]);
      }
    }
    for (const [step, found] of leftBy(migrations, diffs)) {
      console.log(`      down step ${step} left:\n${found.slice(0, 40).map((f) => `        ${f.line}\n          (first seen re-applied up to ${f.firstAt})`).join("\n")}`);
    }
  } finally {
    await adminSql.end();
    await ownerSql.end();
    await rm(scratch, { recursive: true, force: true });
    await drop();
  }
}

async function main(): Promise<number> {
  const summaryFile = process.argv.slice(2).find((a) => a.startsWith("--summary="))?.slice("--summary=".length);

  const migrations = await stems(MIGRATIONS_DIR, ".sql");
  const rollbacks = await stems(ROLLBACKS_DIR, DOWN_SUFFIX);
  const noDown = migrations.filter((s) => !rollbacks.includes(s));
  const noUp = rollbacks.filter((s) => !migrations.includes(s));
  report(noDown.length === 0 && noUp.length === 0, `every migration has its ${ROLLBACKS_DIR}/<stem>${DOWN_SUFFIX} and every down step its migration`,
    [...noDown.map((s) => `no down step for ${MIGRATIONS_DIR}/${s}.sql`), ...noUp.map((s) => `no migration for ${ROLLBACKS_DIR}/${s}${DOWN_SUFFIX}`)].join("\n") || undefined);

  const unknown = DOWN_STEP_DATA_CHECKS.filter((c) => !migrations.includes(c.stem)).map((c) => `no migration ${c.stem}`);
  report(unknown.length === 0, "every down-step data check names a migration", unknown.join("\n") || undefined);

  const guard = await checkAppendOnly(ROOT);
  if (guard.status === "skipped") console.log(`skip  append-only guard: ${guard.reason}`);
  else report(guard.violations.length === 0, `append-only: no migration changed since the baseline ${guard.baseline.slice(0, 12)}`, guard.violations.join("\n") || undefined);

  if (reportProblems(await checkPostgres(TEST_ADMIN_URL, { needPgtap: false }))) {
    if (noDown.length === 0) {
      await roundTrip(migrations).catch((error) => report(false, "the round trip ran to its end", (error as Error).stack ?? String(error)));
    }
    await localStackChecks(report).catch((error) => report(false, "the local-stack checks ran to their end", (error as Error).stack ?? String(error)));
  } else {
    failed++;
  }

  console.log(`migrations: ${passed} passed, ${failed} failed`);
  if (summaryFile) await writeFile(summaryFile, JSON.stringify({ passed, failed }) + "\n");
  return failed === 0 ? 0 : 1;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().then(
    (code) => process.exit(code),
    async (error) => {
      console.error(error instanceof Error ? error.stack ?? error.message : error);
      await runCleanups();
      process.exit(1);
    },
  );
}

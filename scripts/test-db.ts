// `npm run test:db`: the pgTAP suite (supabase/tests/database) through
// pg_prove, twice at once, each on a freshly set-up database of its own that
// is dropped afterwards (also on failure or Ctrl-C):
//   superuser  as the superuser of TEST_DATABASE_URL: every assertion runs (a skip fails the run);
//   owner      as the owner role, the shape of `supabase test db` on Supabase: its connection is the
//              project's `postgres`, no superuser (here tidesync_owner, which the stand-in gives what
//              supautils gives postgres, but for its privileged extensions: the superuser puts pgTAP
//              in). A file skips, with its reason, what that role cannot do on Supabase either (SET
//              track_functions, open a second session with dblink without a password);
//              docs/supabase-standin.md lists them.
// The superuser run's output streams; the owner run's follows it.
//
// Files run in name order on one database: 000-setup-test-helpers.sql commits
// the `tests` helpers, every *.test.sql after it rolls back. pgTAP is
// installed into `extensions` (as on Supabase) and reached via PGOPTIONS.
//
//   npm run test:db                        all files
//   npm run test:db -- 003-devices         only files whose name contains "003-devices" (+ the helpers)
//   --summary=<file>                       also write {"passed": n, "failed": n, "skipped": n} of both runs (used by `npm test`)
//   --advisors                             after the suite, run `supabase db advisors --type security` on the owner
//                                          run's database (zero findings; result in the summary as "advisors"):
//                                          what `supabase test db` leaves in a real project (the `tests` helpers,
//                                          pgTAP) must not be flagged. Performance lints (unused_index) measure a
//                                          workload, which this suite is not; the integration database covers them.
import { spawn } from "node:child_process";
import { readdir, writeFile } from "node:fs/promises";
import path from "node:path";
import postgres from "postgres";
import { runAdvisors } from "./lib/advisors.ts";
import { ROOT } from "./lib/paths.ts";
import { checkPgProve, checkPostgres, reportProblems } from "./lib/prerequisites.ts";
import { runCleanups } from "./lib/shutdown.ts";
import { createTempDatabase, TEST_ADMIN_URL, type TempDatabase } from "./lib/temp-database.ts";

const TESTS_DIR = path.join(ROOT, "supabase/tests/database");

export interface PgTapCounts {
  passed: number;
  failed: number;
  /** Assertions skipped (`ok n # skip`), not counted as passed. */
  skipped: number;
}

/** Counts TAP results in pg_prove --verbose output; a file that died or ran short counts its missing tests as failed. */
export function countTap(output: string, exitCode: number): PgTapCounts {
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  for (const line of output.split("\n")) {
    if (/^\s*not ok \d+/.test(line)) failed++;
    else if (/^\s*ok \d+.*#\s*skip/i.test(line)) skipped++;
    else if (/^\s*ok \d+/.test(line)) passed++;
  }
  for (const match of output.matchAll(/You planned (\d+) tests? but ran (\d+)/g)) {
    failed += Math.max(0, Number(match[1]) - Number(match[2]));
  }
  if (exitCode !== 0 && failed === 0) failed = 1;
  return { passed, failed, skipped };
}

async function testFiles(filters: string[]): Promise<string[]> {
  const names = (await readdir(TESTS_DIR)).filter((n) => n.endsWith(".sql")).sort();
  const setup = names.filter((n) => !n.endsWith(".test.sql"));
  const tests = names.filter((n) => n.endsWith(".test.sql") && (filters.length === 0 || filters.some((f) => n.includes(f))));
  return [...setup, ...tests].map((n) => path.join(TESTS_DIR, n));
}

/** Where a run's lines go: held back until `live`, then printed as they come. */
class RunOutput {
  private held: string[] = [];
  private live = false;
  line(text: string): void {
    if (this.live) console.log(text);
    else this.held.push(text);
  }
  goLive(): void {
    for (const text of this.held) console.log(text);
    this.held = [];
    this.live = true;
  }
}

function runPgProve(dbUrl: string, files: string[], out: RunOutput): Promise<{ code: number; output: string }> {
  return new Promise((resolve, reject) => {
    const pgOptions = [process.env.PGOPTIONS, "-c search_path=public,extensions", "-c client_min_messages=warning"].filter(Boolean).join(" ");
    const child = spawn("pg_prove", ["--verbose", "--dbname", dbUrl, ...files.map((f) => path.relative(ROOT, f))], {
      cwd: ROOT,
      env: { ...process.env, PGOPTIONS: pgOptions },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    let pending = "";
    const onData = (chunk: Buffer) => {
      const text = chunk.toString();
      output += text;
      pending += text;
      const lines = pending.split("\n");
      pending = lines.pop() ?? "";
      // Passing (and skipped) assertions stay quiet; file names, failures, diagnostics and the summary show.
      for (const line of lines) if (!/^\s*ok \d+/.test(line) && line.trim() !== "") out.line(line);
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.on("error", reject);
    child.on("close", (code) => {
      if (pending.trim() && !/^\s*ok \d+/.test(pending)) out.line(pending);
      resolve({ code: code ?? 1, output });
    });
  });
}

/**
 * pgTAP as the superuser puts it in. On Supabase `supabase test db` creates it as postgres, which
 * supautils runs as its superuser (a privileged extension, owned by supabase_admin); the stand-in
 * lends no role SUPERUSER for that, so the superuser puts it in for both runs, with that owner.
 */
async function installPgTap(adminDbUrl: string): Promise<void> {
  const sql = postgres(adminDbUrl, { max: 1, onnotice: () => {} });
  try {
    await sql`create extension if not exists pgtap with schema extensions`;
  } finally {
    await sql.end();
  }
}

interface Run {
  name: "superuser" | "owner";
  title: string;
  db: TempDatabase;
  url: string;
  out: RunOutput;
}

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  const summaryFile = args.find((a) => a.startsWith("--summary="))?.slice("--summary=".length);
  const filters = args.filter((a) => !a.startsWith("--"));

  if (!reportProblems([...await checkPostgres(TEST_ADMIN_URL, { needPgtap: true }), ...await checkPgProve()])) return 2;

  const files = await testFiles(filters);
  const started = Date.now();
  const made = await Promise.allSettled([
    createTempDatabase("tidesync_pgtap", { seed: true }),
    createTempDatabase("tidesync_pgtap_owner", { seed: true }),
  ]);
  try {
    const failedSetup = made.find((m) => m.status === "rejected");
    if (failedSetup) throw failedSetup.reason;
    const [full, owner] = made.map((m) => (m as PromiseFulfilledResult<TempDatabase>).value);
    await Promise.all([installPgTap(full.adminDbUrl), installPgTap(owner.adminDbUrl)]);
    const ownerRole = new URL(owner.ownerDbUrl).username;
    const runs: Run[] = [
      { name: "superuser", title: `as the superuser ${new URL(full.adminDbUrl).username}: every assertion`, db: full, url: full.adminDbUrl, out: new RunOutput() },
      { name: "owner", title: `as the owner role ${ownerRole}, as \`supabase test db\` runs on Supabase (postgres, no superuser)`, db: owner, url: owner.ownerDbUrl, out: new RunOutput() },
    ];
    console.log(`pgTAP: ${files.length} files, run twice at once on databases of their own (set up in ${((Date.now() - started) / 1000).toFixed(1)} s)`);
    runs[0].out.goLive();
    const results = await Promise.all(runs.map(async (run, i) => {
      run.out.line(`\n── pgTAP ${run.title} (${run.db.name})`);
      const { code, output } = await runPgProve(run.url, files, run.out);
      const counts = countTap(output, code);
      // The superuser run is the one that checks everything: a skip there is a check lost.
      if (run.name === "superuser" && counts.skipped > 0) {
        run.out.line(`pgTAP ${run.name}: ${counts.skipped} assertion(s) skipped, which this run must not do (failed)`);
        counts.failed += counts.skipped;
      }
      run.out.line(`pgTAP ${run.name}: ${counts.passed} passed, ${counts.skipped} skipped, ${counts.failed} failed`);
      if (i === 0) runs[1].out.goLive();
      return { code, counts };
    }));
    const counts = results.reduce<PgTapCounts>((sum, r) => ({
      passed: sum.passed + r.counts.passed, failed: sum.failed + r.counts.failed, skipped: sum.skipped + r.counts.skipped,
    }), { passed: 0, failed: 0, skipped: 0 });
    console.log(`\npgTAP, both runs: ${counts.passed} passed, ${counts.skipped} skipped, ${counts.failed} failed`);
    const advisors = args.includes("--advisors") ? await runAdvisors(owner.ownerDbUrl, "security") : undefined;
    if (advisors) console.log(`advisors on the owner run's pgTAP database after its suite: ${advisors.findings} finding(s)`);
    if (summaryFile) await writeFile(summaryFile, JSON.stringify({ ...counts, advisors }) + "\n");
    return results.every((r) => r.code === 0) && counts.failed === 0 && advisors?.ok !== false ? 0 : 1;
  } finally {
    await Promise.all(made.map((m) => (m.status === "fulfilled" ? m.value.drop() : undefined)));
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().then(
    (code) => process.exit(code),
    async (error) => {
      console.error(error instanceof Error ? error.message : error);
      await runCleanups();
      process.exit(1);
    },
  );
}

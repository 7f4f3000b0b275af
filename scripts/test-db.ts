// `npm run test:db`: the pgTAP suite (supabase/tests/database) through
// pg_prove, on a freshly set-up database of its own that is dropped
// afterwards (also on failure or Ctrl-C).
//
// Files run in name order on one database: 000-setup-test-helpers.sql commits
// the `tests` helpers, every *.test.sql after it rolls back. pgTAP is
// installed into `extensions` (as on Supabase) and reached via PGOPTIONS.
//
//   npm run test:db                        all files
//   npm run test:db -- 003-devices         only files whose name contains "003-devices" (+ the helpers)
//   --summary=<file>                       also write {"passed": n, "failed": n} (used by `npm test`)
//   --advisors                             after the suite, run `supabase db advisors --type security` on its
//                                          database (zero findings; result in the summary as "advisors"): what
//                                          the suite leaves in a real project (the `tests` helpers) must not
//                                          be flagged. Performance lints (unused_index) measure a workload,
//                                          which this suite is not; the integration database covers them.
import { spawn } from "node:child_process";
import { readdir, writeFile } from "node:fs/promises";
import path from "node:path";
import postgres from "postgres";
import { runAdvisors } from "./lib/advisors.ts";
import { ROOT } from "./lib/paths.ts";
import { checkPgProve, checkPostgres, reportProblems } from "./lib/prerequisites.ts";
import { runCleanups } from "./lib/shutdown.ts";
import { createTempDatabase, TEST_ADMIN_URL } from "./lib/temp-database.ts";

const TESTS_DIR = path.join(ROOT, "supabase/tests/database");

export interface PgTapCounts {
  passed: number;
  failed: number;
}

/** Counts TAP results in pg_prove --verbose output; a file that died or ran short counts its missing tests as failed. */
export function countTap(output: string, exitCode: number): PgTapCounts {
  let passed = 0;
  let failed = 0;
  for (const line of output.split("\n")) {
    if (/^\s*not ok \d+/.test(line)) failed++;
    else if (/^\s*ok \d+/.test(line)) passed++;
  }
  for (const match of output.matchAll(/You planned (\d+) tests? but ran (\d+)/g)) {
    failed += Math.max(0, Number(match[1]) - Number(match[2]));
  }
  if (exitCode !== 0 && failed === 0) failed = 1;
  return { passed, failed };
}

async function testFiles(filters: string[]): Promise<string[]> {
  const names = (await readdir(TESTS_DIR)).filter((n) => n.endsWith(".sql")).sort();
  const setup = names.filter((n) => !n.endsWith(".test.sql"));
  const tests = names.filter((n) => n.endsWith(".test.sql") && (filters.length === 0 || filters.some((f) => n.includes(f))));
  return [...setup, ...tests].map((n) => path.join(TESTS_DIR, n));
}

function runPgProve(dbUrl: string, files: string[]): Promise<{ code: number; output: string }> {
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
      // Passing assertions stay quiet; file names, failures, diagnostics and the summary show.
      for (const line of lines) if (!/^\s*ok \d+/.test(line) && line.trim() !== "") console.log(line);
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.on("error", reject);
    child.on("close", (code) => {
      if (pending.trim() && !/^\s*ok \d+/.test(pending)) console.log(pending);
      resolve({ code: code ?? 1, output });
    });
  });
}

async function installPgTap(adminDbUrl: string): Promise<void> {
  const sql = postgres(adminDbUrl, { max: 1, onnotice: () => {} });
  try {
    await sql`create extension if not exists pgtap with schema extensions`;
  } finally {
    await sql.end();
  }
}

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  const summaryFile = args.find((a) => a.startsWith("--summary="))?.slice("--summary=".length);
  const filters = args.filter((a) => !a.startsWith("--"));

  if (!reportProblems([...await checkPostgres(TEST_ADMIN_URL, { needPgtap: true }), ...await checkPgProve()])) return 2;

  const files = await testFiles(filters);
  const started = Date.now();
  const db = await createTempDatabase("tidesync_pgtap", { seed: true });
  try {
    await installPgTap(db.adminDbUrl);
    console.log(`pgTAP: ${files.length} files on ${db.name} (set up in ${((Date.now() - started) / 1000).toFixed(1)} s)`);
    const { code, output } = await runPgProve(db.adminDbUrl, files);
    const counts = countTap(output, code);
    console.log(`pgTAP: ${counts.passed} passed, ${counts.failed} failed`);
    const advisors = args.includes("--advisors") ? await runAdvisors(db.ownerDbUrl, "security") : undefined;
    if (advisors) console.log(`advisors on the pgTAP database after its suite: ${advisors.findings} finding(s)`);
    if (summaryFile) await writeFile(summaryFile, JSON.stringify({ ...counts, advisors }) + "\n");
    return code === 0 && counts.failed === 0 && advisors?.ok !== false ? 0 : 1;
  } finally {
    await db.drop();
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

// `npm test`: the whole suite, in order, on databases it creates and drops.
//   0. prerequisites    Postgres (superuser), pgTAP, pg_prove, the pinned npm tools
//   1. unit             vitest --project unit
//   2. pgTAP            scripts/test-db.ts: as the superuser (every assertion) and as the owner role
//                       (`supabase test db`'s shape), a database each, then supabase db advisors
//                       --type security on the owner run's database (the helpers stay there)
//      migrations       scripts/test-migrations.ts: down/up round trip, append-only guard, local-stack scripts
//   3. integration      vitest --project integration, on a database this script sets up
//   4. checks           generate:check; supabase db advisors on the integration database
//                       (after the tests, so unused_index sees the indexes used);
//                       deno check; tsc --noEmit
// Every stage runs even when an earlier one failed (one run shows everything);
// the last line is `tests: N passed, N failed` (vitest + pgTAP test counts),
// and the exit code is non-zero when any test or check failed.
import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { DENO, denoCheckArgs, denoEnv } from "./lib/deno.ts";
import { bin, ROOT } from "./lib/paths.ts";
import { runAdvisors } from "./lib/advisors.ts";
import { checkNodeTools, checkPgProve, checkPostgres, reportProblems } from "./lib/prerequisites.ts";
import { runCleanups } from "./lib/shutdown.ts";
import { createTempDatabase, TEST_ADMIN_URL } from "./lib/temp-database.ts";
import { redactUrl } from "./lib/redact.ts";

const EXTERNAL_DATABASE_ENV = "TIDESYNC_IT_DATABASE"; // read by tests/support/test-stack.ts

interface StageResult {
  name: string;
  ok: boolean;
  seconds: number;
  passed: number;
  failed: number;
  note?: string;
  /** Failed tests, one line each: the summary repeats them, as CI may keep only the tail of the output. */
  failures?: string[];
}

const results: StageResult[] = [];

function banner(title: string): void {
  console.log(`\n━━ ${title} ${"━".repeat(Math.max(3, 72 - title.length))}`);
}

function runStreaming(command: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (d: Buffer) => {
      output += d;
      process.stdout.write(d);
    });
    child.stderr.on("data", (d: Buffer) => {
      output += d;
      process.stderr.write(d);
    });
    child.on("error", (error) => resolve({ code: 127, output: String(error) }));
    child.on("close", (code) => resolve({ code: code ?? 1, output }));
  });
}

async function stage(name: string, work: () => Promise<Omit<StageResult, "name" | "seconds">>): Promise<StageResult> {
  banner(name);
  const started = Date.now();
  let result: StageResult;
  try {
    result = { name, seconds: 0, ...await work() };
  } catch (error) {
    console.error(error instanceof Error ? error.stack ?? error.message : error);
    result = { name, seconds: 0, ok: false, passed: 0, failed: 0, note: "crashed" };
  }
  result.seconds = (Date.now() - started) / 1000;
  results.push(result);
  return result;
}

interface VitestJson {
  numPassedTests: number;
  numFailedTests: number;
  numFailedTestSuites: number;
  numTotalTests: number;
  testResults?: {
    name: string;
    message?: string;
    assertionResults?: { fullName: string; status: string; failureMessages?: string[] }[];
  }[];
}

/** "file > test: first line of the error", for every failed test (or file that failed to load). */
function failedTests(report: VitestJson): string[] {
  const lines: string[] = [];
  for (const file of report.testResults ?? []) {
    const where = path.relative(ROOT, file.name);
    const failed = (file.assertionResults ?? []).filter((a) => a.status === "failed");
    for (const a of failed) lines.push(`${where} > ${a.fullName}: ${firstLine(a.failureMessages?.[0])}`);
    if (failed.length === 0 && file.message) lines.push(`${where}: ${firstLine(file.message)}`);
  }
  return lines;
}

function firstLine(text: string | undefined): string {
  return (text ?? "").trim().split("\n")[0].slice(0, 300);
}

async function vitest(project: string, outDir: string, env: NodeJS.ProcessEnv = process.env) {
  const jsonFile = path.join(outDir, `${project}.json`);
  const { code } = await runStreaming(bin("vitest"), [
    "run", "--project", project, "--reporter=default", "--reporter=json", `--outputFile.json=${jsonFile}`,
  ], env);
  const report = await readFile(jsonFile, "utf8").then((t) => JSON.parse(t) as VitestJson).catch(() => undefined);
  const passed = report?.numPassedTests ?? 0;
  let failed = report?.numFailedTests ?? 0;
  // A file that fails to load has no failed test, but the run failed.
  if (code !== 0 && failed === 0) failed = Math.max(1, report?.numFailedTestSuites ?? 0);
  return {
    ok: code === 0 && failed === 0,
    passed,
    failed,
    note: report ? undefined : "no JSON report (vitest crashed)",
    failures: report ? failedTests(report) : undefined,
  };
}

async function check(command: string, args: string[], env?: NodeJS.ProcessEnv) {
  const { code } = await runStreaming(command, args, env);
  return { ok: code === 0, passed: 0, failed: 0 };
}

async function advisors(ownerDbUrl: string) {
  const { ok, findings } = await runAdvisors(ownerDbUrl);
  return { ok, passed: 0, failed: 0, note: `${findings} finding(s)` };
}

async function main(): Promise<number> {
  const outDir = await mkdtemp(path.join(os.tmpdir(), "tidesync-test-"));
  try {
    banner("prerequisites");
    const problems = [
      ...await checkNodeTools(["vitest", "supabase", "deno", "tsc"]),
      ...await checkPostgres(TEST_ADMIN_URL, { needPgtap: true }),
      ...await checkPgProve(),
    ];
    if (!reportProblems(problems)) {
      console.log("tests: 0 passed, 0 failed");
      return 2;
    }
    console.log(`Postgres ${redactUrl(TEST_ADMIN_URL)}, pgTAP, pg_prove, supabase CLI, deno: present`);

    await stage("unit (vitest --project unit)", () => vitest("unit", outDir));

    // The pgTAP run also runs the advisors on its owner run's database after the
    // suite: a real project that ran `supabase test db` must stay clean.
    let pgtapAdvisors: { ok: boolean; findings: number } | undefined;
    await stage("pgTAP (npm run test:db)", async () => {
      const summary = path.join(outDir, "pgtap.json");
      const { code } = await runStreaming(bin("tsx"), ["scripts/test-db.ts", `--summary=${summary}`, "--advisors"]);
      const counts = await readFile(summary, "utf8")
        .then((t) => JSON.parse(t) as { passed: number; failed: number; skipped?: number; advisors?: { ok: boolean; findings: number } })
        .catch(() => undefined);
      pgtapAdvisors = counts?.advisors;
      const failed = counts?.failed ?? 0;
      // Advisor findings alone (a non-zero exit too) are the next stage's failure.
      const suiteFailed = code !== 0 && pgtapAdvisors?.ok !== false;
      const note = counts?.skipped ? `${counts.skipped} skipped as the owner role (what postgres cannot do on Supabase either)` : undefined;
      return { ok: failed === 0 && !suiteFailed, passed: counts?.passed ?? 0, failed: suiteFailed && failed === 0 ? 1 : failed, note };
    });

    await stage("check: supabase db advisors --type security on the pgTAP owner run's database after its suite (zero findings)", async () =>
      pgtapAdvisors
        ? { ok: pgtapAdvisors.ok, passed: 0, failed: 0, note: `${pgtapAdvisors.findings} finding(s)` }
        : { ok: false, passed: 0, failed: 0, note: "the pgTAP run did not reach the advisors" });

    await stage("migrations: down/up round trip as the owner, append-only guard, local-stack scripts (npm run test:migrations)", async () => {
      const summary = path.join(outDir, "migrations.json");
      const { code } = await runStreaming(bin("tsx"), ["scripts/test-migrations.ts", `--summary=${summary}`]);
      const counts = await readFile(summary, "utf8").then((t) => JSON.parse(t) as { passed: number; failed: number }).catch(() => undefined);
      const failed = counts?.failed ?? 0;
      return { ok: code === 0 && failed === 0, passed: counts?.passed ?? 0, failed: code !== 0 && failed === 0 ? 1 : failed };
    });

    // The integration database outlives vitest: the advisors read its index usage.
    let itDb: Awaited<ReturnType<typeof createTempDatabase>> | undefined;
    await stage("integration (vitest --project integration, real Deno + Postgres)", async () => {
      itDb = await createTempDatabase("tidesync_it", { seed: true });
      console.log(`integration database: ${itDb.name} (owner role, migrations via supabase db push)`);
      return await vitest("integration", outDir, { ...process.env, [EXTERNAL_DATABASE_ENV]: itDb.name });
    });

    await stage("check: generated files are fresh (npm run generate:check)", () =>
      check(bin("tsx"), ["scripts/generate/index.ts", "--check"]));

    await stage("check: supabase db advisors on the integration database (zero findings, every level)", async () => {
      if (!itDb) return { ok: false, passed: 0, failed: 0, note: "no integration database" };
      try {
        return await advisors(itDb.ownerDbUrl);
      } finally {
        await itDb.drop();
      }
    });

    await stage("check: deno check (functions/api/index.ts, scripts/serve-functions.ts)", () =>
      check(DENO, denoCheckArgs(), denoEnv({})));

    await stage("check: tsc --noEmit (Node side, strict)", () => check(bin("tsc"), ["--noEmit", "-p", "tsconfig.json"]));
  } finally {
    await rm(outDir, { recursive: true, force: true });
  }

  banner("summary");
  for (const r of results) {
    const counts = r.passed + r.failed > 0 ? ` ${r.passed} passed, ${r.failed} failed` : "";
    console.log(`${r.ok ? "PASS" : "FAIL"}  ${r.name}${counts}${r.note ? ` (${r.note})` : ""}  ${r.seconds.toFixed(1)} s`);
    for (const failure of r.failures ?? []) console.log(`      ✗ ${failure}`);
  }
  const passed = results.reduce((n, r) => n + r.passed, 0);
  const failed = results.reduce((n, r) => n + r.failed, 0);
  const failedStages = results.filter((r) => !r.ok).length;
  if (failedStages > 0) console.log(`${failedStages} stage(s) failed`);
  console.log(`tests: ${passed} passed, ${failed} failed`);
  return failedStages === 0 && failed === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  async (error) => {
    console.error(error instanceof Error ? error.stack ?? error.message : error);
    await runCleanups();
    console.log("tests: 0 passed, 1 failed");
    process.exit(1);
  },
);

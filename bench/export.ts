// `npm run bench:export`: GET /v1/users/me/export of an account with 100,000
// synced rows (BENCH_EXPORT_ROWS) through the real function on real Deno, and
// of an account with 10 rows, side by side on one fresh function server. It
// reports the time, the bytes, and the function's resident memory: sampled
// every 20 ms during each export and its peak (VmHWM) after. The export
// streams from a database cursor, so the memory of the 100,000-row export
// should stay near the 10-row one; the goal is a peak under 200 MB. Then it
// times the account purge of the large account (run_account_deletions).
// Writes bench/results/export-<YYYY-MM-DD>.json. Not a test: nothing fails here.
import { mkdir, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { accountExportSchema } from "../functions/_shared/schemas/account-export.ts";
import { ROOT } from "../scripts/lib/paths.ts";
import { runCleanups } from "../scripts/lib/shutdown.ts";
import { type BenchStack, type BenchUser, startBenchStack } from "./bench-stack.ts";
import { now, round } from "./measure.ts";
import { seedTasks, vacuumAnalyze } from "./pull-throughput.ts";
import { readMemory } from "./server-profile.ts";

const log = (line: string) => console.log(line);
const PEAK_RSS_GOAL_MB = 200;

function rowsFromEnv(): number {
  const raw = process.env.BENCH_EXPORT_ROWS ?? "100000";
  const rows = Number(raw);
  if (!Number.isSafeInteger(rows) || rows <= 0) throw new Error(`BENCH_EXPORT_ROWS must be a positive integer, got ${raw}`);
  return rows;
}

interface ExportRun {
  rows: number;
  ms: number;
  bytes: number;
  rowsPerSecond: number;
  rssBeforeMb: number;
  rssMaxDuringMb: number;
  peakRssAfterMb: number;
}

async function timeExport(stack: BenchStack, pid: number, user: BenchUser, expectedRows: number): Promise<ExportRun> {
  const before = await readMemory(pid);
  let rssMax = before.currentRssMb;
  const sampler = setInterval(() => {
    readMemory(pid).then((m) => (rssMax = Math.max(rssMax, m.currentRssMb)), () => {});
  }, 20);
  const start = now();
  const response = await fetch(`${stack.apiUrl}/v1/users/me/export`, { headers: { authorization: `Bearer ${user.token}` } });
  if (response.status !== 200) throw new Error(`export answered ${response.status}: ${await response.text()}`);
  const chunks: Buffer[] = [];
  let bytes = 0;
  const reader = response.body!.getReader();
  for (let read = await reader.read(); !read.done; read = await reader.read()) {
    bytes += read.value.length;
    chunks.push(Buffer.from(read.value));
  }
  const ms = now() - start;
  clearInterval(sampler);
  const after = await readMemory(pid);
  // The bench checks what it measured: the whole document, every row.
  const doc = accountExportSchema.parse(JSON.parse(Buffer.concat(chunks).toString("utf8")));
  if (doc.synced.tasks.length !== expectedRows) throw new Error(`the export holds ${doc.synced.tasks.length} tasks, expected ${expectedRows}`);
  return {
    rows: expectedRows,
    ms: round(ms, 0),
    bytes,
    rowsPerSecond: round(expectedRows / (ms / 1000), 0),
    rssBeforeMb: round(before.currentRssMb),
    rssMaxDuringMb: round(Math.max(rssMax, after.currentRssMb)),
    peakRssAfterMb: round(after.peakRssMb),
  };
}

async function main() {
  const rows = rowsFromEnv();
  const stack = await startBenchStack(log);
  const pid = stack.server.process.pid;
  if (pid === undefined) throw new Error("the functions server has no pid");
  try {
    const small = await stack.createUser("export-small");
    const large = await stack.createUser("export-large");
    log(`export: seeding 10 and ${rows} tasks…`);
    await seedTasks(stack.ownerSql, [small.listId], 10);
    await seedTasks(stack.ownerSql, [large.listId], rows);
    await vacuumAnalyze(stack.adminSql);

    log("export: warm-up (10 rows), then 10 rows, then the large account…");
    await timeExport(stack, pid, small, 10);
    const runs = { small: await timeExport(stack, pid, small, 10), large: await timeExport(stack, pid, large, rows) };

    // The other end of the lifecycle: the purge of that account (its personal list and every row in it go with it).
    log("export: purging the large account (run_account_deletions as the owner role)…");
    await stack.adminSql`
      insert into app_private.account_deletion_requests (user_id, requested_at, scheduled_for)
      values (${large.userId}, now() - interval '8 days', now() - interval '1 day')`;
    const purgeStart = now();
    const [purged] = await stack.ownerSql<{ users_deleted: number }[]>`select users_deleted from app_private.run_account_deletions(now(), 1)`;
    const purge = { rows, usersDeleted: purged.users_deleted, ms: round(now() - purgeStart, 0) };
    const result = {
      date: new Date().toISOString(),
      machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, loadavg: os.loadavg().map((l) => round(l, 2)) },
      goal: { peakRssMb: PEAK_RSS_GOAL_MB, met: runs.large.peakRssAfterMb < PEAK_RSS_GOAL_MB },
      runs,
      purge,
    };
    console.log("");
    console.log("| account | time | bytes | rows/s | RSS before | RSS max during | peak RSS (VmHWM) after |");
    console.log("|---|---|---|---|---|---|---|");
    for (const [label, r] of Object.entries(runs)) {
      console.log(`| ${label}: ${r.rows} rows | ${r.ms} ms | ${r.bytes} | ${r.rowsPerSecond} | ${r.rssBeforeMb} MB | ${r.rssMaxDuringMb} MB | ${r.peakRssAfterMb} MB |`);
    }
    console.log(`\npeak RSS of the function: ${runs.large.peakRssAfterMb} MB (goal < ${PEAK_RSS_GOAL_MB} MB: ${result.goal.met ? "met" : "MISSED"})`);
    console.log(`purge of the ${rows}-row account: ${purge.ms} ms (${purge.usersDeleted} account deleted)`);
    const dir = path.join(ROOT, "bench", "results");
    await mkdir(dir, { recursive: true });
    const file = path.join(dir, `export-${result.date.slice(0, 10)}.json`);
    await writeFile(file, JSON.stringify(result, null, 2) + "\n");
    log(`export: wrote ${path.relative(ROOT, file)}`);
  } finally {
    await stack.stop();
  }
}

main().then(
  () => process.exit(0),
  async (error) => {
    console.error(error instanceof Error ? error.stack : error);
    await runCleanups();
    process.exit(1);
  },
);

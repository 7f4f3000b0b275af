// The measurements `npm run bench:against` takes in one tree (this one, or an
// older commit's checkout it is copied into): pushes of 1, 50 and 500 ops and
// an initial-sync pull through that tree's real function, on a fresh database
// of that tree's schema, using that tree's own bench helpers. Prints one JSON
// line. Only what every tree since issue 5 exports is used; the pull's seeding
// helper is the one difference (seedRecords before issue 8, seedTasks after).
import { readFile } from "node:fs/promises";
import { startBenchStack } from "./bench-stack.ts";
import * as pull from "./pull-throughput.ts";
import { pushThroughApi } from "./push-throughput.ts";

const PUSHES: [batchSize: number, ops: number][] = [[1, 300], [50, 6000], [500, 20000]];
// pushThroughApi sends three warm-up batches before the timed ones (CPU counts them too).
const WARM_UP_BATCHES = 3;
const PULL_RECORDS = Number(process.env.AGAINST_PULL_RECORDS ?? 50_000);

/**
 * CPU time (ms) a process has used so far, from /proc (10 ms clock ticks). The
 * same reading as server-profile.ts's, kept here: this file runs inside older
 * trees, whose server-profile.ts may not have it.
 */
async function cpuMs(pid: number): Promise<number> {
  try {
    const fields = (await readFile(`/proc/${pid}/stat`, "utf8")).split(") ")[1].split(" ");
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return 0; // the process has ended
  }
}

type Seeding = {
  seedTasks?: (sql: unknown, listIds: string[], count: number, createdBy?: string) => Promise<void>;
  vacuumAnalyze?: (sql: unknown) => Promise<void>;
  seedRecords?: (stack: unknown, user: unknown, count: number) => Promise<void>;
};

const stack = await startBenchStack(() => {});
try {
  const pid = stack.server.process.pid!;
  // CPU of the function server and of its Postgres connections (those opened
  // during the run too: counted from zero) while `run` runs.
  const measure = async <T>(run: () => Promise<T>) => {
    const denoBefore = await cpuMs(pid);
    const before = new Map(await Promise.all((await stack.functionBackendPids()).map(async (p) => [p, await cpuMs(p)] as const)));
    const result = await run();
    const denoMs = (await cpuMs(pid)) - denoBefore;
    const backends = [...new Set([...before.keys(), ...(await stack.functionBackendPids())])];
    const postgresMs = (await Promise.all(backends.map(async (p) => (await cpuMs(p)) - (before.get(p) ?? 0)))).reduce((a, b) => a + b, 0);
    return { result, denoMs, postgresMs };
  };
  const out: Record<string, unknown> = {};
  for (const [batchSize, ops] of PUSHES) {
    const user = await stack.createUser(`against${batchSize}`);
    const { result, denoMs, postgresMs } = await measure(() => pushThroughApi(stack, user, batchSize, ops, () => {}));
    out[`push${batchSize}`] = { opsPerSecond: Math.round(result.opsPerSecond), p50Ms: result.p50Ms, denoCpuMsPerBatch: denoMs / (result.batches + WARM_UP_BATCHES), postgresCpuMsPerBatch: postgresMs / (result.batches + WARM_UP_BATCHES) };
  }
  const user = await stack.createUser("againstPull") as { listId?: string; userId: string };
  const seeding = pull as unknown as Seeding;
  if (seeding.seedTasks && seeding.vacuumAnalyze && user.listId) {
    await seeding.seedTasks(stack.adminSql, [user.listId], PULL_RECORDS, user.userId);
    await seeding.vacuumAnalyze(stack.adminSql);
  } else if (seeding.seedRecords) {
    await seeding.seedRecords(stack, user, PULL_RECORDS);
  } else {
    throw new Error("this tree's bench/pull-throughput.ts has neither seedTasks nor seedRecords");
  }
  const { result, denoMs, postgresMs } = await measure(() => pull.pullThroughApi(stack, user as never, 1000, 2));
  // Two timed walks and one warm-up: CPU per page over all three.
  const pages = result.pages * 3;
  out.pull = { recordsPerSecond: Math.round(result.recordsPerSecond), pageP50Ms: result.pageP50Ms, denoCpuMsPerPage: denoMs / pages, postgresCpuMsPerPage: postgresMs / pages };
  console.log(`AGAINST ${JSON.stringify(out)}`);
} finally {
  await stack.stop();
}

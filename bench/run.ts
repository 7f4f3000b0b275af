// `npm run bench`: every measurement side by side in one run, on one fresh
// database and one real Deno function server, then a table (goals met/missed)
// and bench/results/<YYYY-MM-DD>.json. Not a test: nothing here fails on a
// missed goal. Sizes: see bench/bench-config.ts (BENCH_SCALE=0.1 for a smoke run).
import { execFileSync } from "node:child_process";
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { ROOT } from "../scripts/lib/paths.ts";
import { DENO, denoEnv, denoInstallArgs } from "../scripts/lib/deno.ts";
import { runCleanups } from "../scripts/lib/shutdown.ts";
import { type BenchConfig, benchConfigFromEnv, EDIT_BATCH_SIZE } from "./bench-config.ts";
import { type BenchStack, startBenchStack } from "./bench-stack.ts";
import { type LatencyResult, measureBatchLatency, measureFloorLatency, measureThinApiLatency } from "./batch-latency.ts";
import { renderChart } from "./chart.ts";
import { measurePushLedgerScale } from "./push-ledger-scale.ts";
import { measureScopesPerUser } from "./scopes-per-user.ts";
import { measureSustainedLoad } from "./sustained-load.ts";
import { round } from "./measure.ts";
import { pullFloor, pullThroughApi, seedTasks, vacuumAnalyze } from "./pull-throughput.ts";
import { measurePullScopeCost, type ScopeCostResult } from "./pull-scope-cost.ts";
import { type AroundApi, heldTasksFor, pushEditsSideBySide, pushSideBySide, seedHeldTasks, type ThroughputResult, WARM_UP_BATCHES } from "./push-throughput.ts";
import { measureRlsOverhead } from "./rls-overhead.ts";
import { measureHttpFloor } from "./http-floor.ts";
import { batchBody, taskRows } from "./push-throughput.ts";
import { denoDatabaseProbe, fixedRequestCosts, pullBreakdown, pullStatementProfile, pushBreakdown, pushStatementProfile, type Step } from "./time-breakdown.ts";
import { type BenchResults, evaluateGoals, formatBreakdown, formatCpu, formatLedger, formatScope, formatScopesPerUser, formatSustained, formatTable, latencyKey, withPrevious } from "./report.ts";
import { type CpuPerRequest, cpuSnapshot, cpuTally, logLineCount, type MemoryStatus, readMemory, serverTimes, type ServerTimes } from "./server-profile.ts";

const log = (line: string) => console.log(line);

/** Everything but the scope-cost pull, on one fresh database and one function server. */
async function mainRun(config: BenchConfig) {
  const stack = await startBenchStack(log);
  const pid = stack.server.process.pid;
  if (pid === undefined) throw new Error("the functions server has no pid");
  const logFile = stack.server.logFile;

  // Resident memory of the function server after each phase: which load grows it.
  const memoryTimeline: ({ after: string } & MemoryStatus)[] = [];
  const remember = async (after: string) => memoryTimeline.push({ after, ...(await readMemory(pid)) });

  // CPU per request of the deno server, the function's Postgres backends and this client, per phase.
  const cpu: Record<string, CpuPerRequest> = {};
  // `run` calls `around` for each window of the phase that counts (a side-by-side
  // measurement counts the API's blocks, not its floor's between them).
  const measureCpuOf = async <T>(phase: string, requestsOf: (result: T) => number, run: (around: AroundApi) => Promise<T>): Promise<T> => {
    const tally = cpuTally();
    const result = await run(async (window) => {
      const before = await cpuSnapshot(pid, await stack.functionBackendPids());
      const value = await window();
      tally.add(before, await cpuSnapshot(pid, await stack.functionBackendPids()));
      return value;
    });
    cpu[phase] = tally.perRequest(requestsOf(result));
    return result;
  };
  const measureCpu = <T>(phase: string, requestsOf: (result: T) => number, run: () => Promise<T>): Promise<T> =>
    measureCpuOf(phase, requestsOf, (around) => around(run));

  try {
    await remember("start");
    // ---- push ---------------------------------------------------------------
    const push: Record<string, { api: ThroughputResult; floor: ThroughputResult; ratio: number; server: ServerTimes }> = {};
    for (const batchSize of Object.keys(config.pushOps).map(Number)) {
      const total = config.pushOps[batchSize];
      log(`push: batch size ${batchSize}, ${total} ops through the API and through raw SQL…`);
      const apiUser = await stack.createUser(`push${batchSize}`);
      const floorUser = await stack.createUser(`floor${batchSize}`);
      const fromLine = await logLineCount(logFile);
      // The warm-up batches run before the clock starts; they are counted in the CPU figures.
      const { api, floor } = await measureCpuOf(`push, batch ${batchSize}`, (r) => r.api.batches + WARM_UP_BATCHES,
        (around: AroundApi) => pushSideBySide(stack, { api: apiUser, floor: floorUser }, batchSize, total, log, around));
      const server = await serverTimes(logFile, "/api/v1/sync/batch", fromLine);
      push[batchSize] = { api, floor, ratio: api.opsPerSecond / floor.opsPerSecond, server };
      await remember(`push, batch ${batchSize}`);
      log(`  → API ${round(api.opsPerSecond, 0)} ops/s, floor ${round(floor.opsPerSecond, 0)} ops/s (${round(100 * push[batchSize].ratio)}% of floor); server p50 ${round(server.p50Ms)} ms/batch`);
    }

    log(`push: ${config.pushEditOps} edits of existing tasks in ${EDIT_BATCH_SIZE}-op batches, through the API and through raw SQL…`);
    let pushEdits: { api: ThroughputResult; floor: ThroughputResult; ratio: number; server: ServerTimes };
    {
      const seeded = async (label: string) => {
        const user = await stack.createUser(label);
        return { user, held: await seedHeldTasks(stack, user, heldTasksFor(EDIT_BATCH_SIZE, config.pushEditOps)) };
      };
      const editor = await seeded("edits");
      const editorFloor = await seeded("editsfloor");
      await vacuumAnalyze(stack.ownerSql); // what autovacuum does after a bulk load: both sides edit rows that settled
      const fromLine = await logLineCount(logFile);
      const { api, floor } = await measureCpuOf(`push edits, batch ${EDIT_BATCH_SIZE}`, (r) => r.api.batches + WARM_UP_BATCHES,
        (around: AroundApi) => pushEditsSideBySide(stack, editor, editorFloor, EDIT_BATCH_SIZE, log, around));
      const server = await serverTimes(logFile, "/api/v1/sync/batch", fromLine);
      pushEdits = { api, floor, ratio: api.opsPerSecond / floor.opsPerSecond, server };
      await remember(`push edits, batch ${EDIT_BATCH_SIZE}`);
      log(`  → API ${round(api.opsPerSecond, 0)} ops/s, floor ${round(floor.opsPerSecond, 0)} ops/s (${round(100 * pushEdits.ratio)}% of floor)`);
    }

    log("breakdown: one 500-op push, layer by layer…");
    const pushSteps: Step[] = [
      { step: "client wall time per batch (POST /v1/sync/batch, batch 500, p50)", ms: push[500].api.p50Ms },
      { step: "server-side handler time per batch (function log, p50)", ms: push[500].server.p50Ms },
      ...await pushBreakdown(stack, await stack.createUser("breakdown"), await stack.createUser("breakdownfloor"), 500, config.breakdownSamples),
      ...await pushStatementProfile(stack, await stack.createUser("statements"), 500),
    ];
    log("breakdown: what every request pays…");
    const [emptyHttpFloor] = await measureHttpFloor([{ responseBody: "{}" }], config.breakdownSamples * 4);
    const fixed = await fixedRequestCosts(stack, await stack.createUser("fixed"), config.breakdownSamples * 4);
    // What an authenticated request adds to bare HTTP (routing, logging, token, rate limit, session check and the
    // account's creation time, as the pull reads them).
    const authenticatedRequestMs = Math.max(0, fixed.whoamiMs - emptyHttpFloor.ms);
    const fixedSteps: Step[] = [
      { step: "HTTP floor: bare Deno.serve answering {}", ms: emptyHttpFloor.ms },
      ...fixed.steps,
      { step: "POST /v1/sync/batch with 1 op (p50 of the batch-1 run)", ms: push[1].api.p50Ms },
      { step: "raw-SQL floor: one 1-row insert into public.tasks as authenticated (p50)", ms: push[1].floor.p50Ms },
    ];
    {
      // The HTTP floor for the same bytes: a real request body and the real answer to it.
      const user = await stack.createUser("httpfloor");
      const requestBody = batchBody(taskRows(user.listId, 500), user.deviceId);
      const response = await fetch(`${stack.apiUrl}/v1/sync/batch`, { method: "POST", headers: { authorization: `Bearer ${user.token}`, "content-type": "application/json" }, body: requestBody });
      const [floor] = await measureHttpFloor([{ requestBody, responseBody: await response.text() }], config.breakdownSamples);
      pushSteps.splice(2, 0, { step: `HTTP floor: bare Deno.serve, same bytes (${Math.round(floor.requestBytes / 1024)} KiB up, ${Math.round(floor.responseBytes / 1024)} KiB down)`, ms: floor.ms });
    }

    // ---- pull ---------------------------------------------------------------
    log(`pull: seeding ${config.pullRecords} tasks in one user's list…`);
    const pullUser = await stack.createUser("pull");
    await seedTasks(stack.ownerSql, [pullUser.listId], config.pullRecords);
    await vacuumAnalyze(stack.ownerSql);
    log(`pull: initial sync through the API (limit=${config.pullPageSize}), ${config.pullRepeats} timed walks + 1 warm-up…`);
    const pullFrom = await logLineCount(logFile);
    const pullApi = await measureCpu("pull page", (r) => r.pages * (config.pullRepeats + 1), () => pullThroughApi(stack, pullUser, config.pullPageSize, config.pullRepeats));
    const pullServer = await serverTimes(logFile, "/api/v1/sync/changes", pullFrom);
    log(`  → API ${round(pullApi.recordsPerSecond, 0)} records/s (${pullApi.pages} pages, ${round(pullApi.bytes / 1e6)} MB)`);
    log("pull: the same pages as raw SQL (Postgres builds the JSON)…");
    const pullSql = await pullFloor(stack, pullUser, config.pullPageSize, config.pullRepeats);
    const pullRatio = pullApi.recordsPerSecond / pullSql.recordsPerSecond;
    log(`  → floor ${round(pullSql.recordsPerSecond, 0)} records/s; API at ${round(100 * pullRatio)}% of floor`);

    await remember("pull");
    log("breakdown: one 1000-record pull page, layer by layer…");
    const pageText = await (await fetch(`${stack.apiUrl}/v1/sync/changes?limit=${config.pullPageSize}`, { headers: { authorization: `Bearer ${pullUser.token}` } })).text();
    const [pullHttpFloor] = await measureHttpFloor([{ responseBody: pageText }], config.breakdownSamples * 2);
    const pullSteps: Step[] = [
      { step: "client wall time per page (GET /v1/sync/changes, incl. JSON.parse, p50)", ms: pullApi.pageP50Ms },
      { step: "server-side handler time per page (function log, p50)", ms: pullServer.p50Ms },
      { step: `HTTP floor: bare Deno.serve answering the same ${Math.round(pullHttpFloor.responseBytes / 1024)} KiB`, ms: pullHttpFloor.ms },
      { step: "raw-SQL floor walk per page (incl. JSON.parse, p50)", ms: pullSql.pageP50Ms },
      ...await pullBreakdown(stack, pullUser, config.pullPageSize, config.breakdownSamples * 2, config.pullRecords),
    ];
    const [{ id: midTaskId }] = await stack.ownerSql<{ id: string }[]>`
      select id::text from public.tasks where list_id = ${pullUser.listId}::uuid order by id offset ${Math.floor(config.pullRecords / 2)}::integer limit 1`;
    const probe = await denoDatabaseProbe(stack, pullUser, config.pullPageSize, config.breakdownSamples * 2, config.pullRecords);
    pullSteps.push(
      { step: "the floor's page query timed from inside Deno (postgres.js on Deno's node:net)", ms: probe.pageMs },
      { step: "one bare round trip (select 1) from Deno", ms: probe.roundTripMs },
      ...await pullStatementProfile(stack, pullUser, config.pullPageSize, midTaskId),
    );

    // ---- RLS ------------------------------------------------------------------
    log("rls: the pull query as authenticated (RLS) vs as the owner (bypasses RLS)…");
    const rls = await measureRlsOverhead(stack, pullUser, config.pullPageSize, config.rlsRepeats);
    log(`  → ${round(rls.ratio, 2)}× (${round(rls.authenticatedSeconds, 2)} s vs ${round(rls.ownerSeconds, 2)} s for ${rls.pages} pages)`);

    // ---- latency ----------------------------------------------------------------
    const latency: LatencyResult[] = [];
    const latencyServer: Record<string, ServerTimes> = {};
    const levels = [...config.latencyDevices.map((devices) => ({ devices, sharedList: false })), { devices: 8, sharedList: true }];
    for (const { devices, sharedList } of levels) {
      const label = `${devices} device(s)${sharedList ? " of one shared list" : ""}`;
      log(`latency: 50-op batches, ${label}, ${config.latencyBatchesPerLevel} batches…`);
      const fromLine = await logLineCount(logFile);
      const result = await measureCpu(`50-op batch at ${label}`, (r) => r.batches + devices * WARM_UP_BATCHES, () => measureBatchLatency(stack, devices, config.latencyBatchesPerLevel, log, sharedList));
      const server = latencyServer[latencyKey(result)] = await serverTimes(logFile, "/api/v1/sync/batch", fromLine);
      latency.push(result);
      await remember(`latency, ${label}`);
      log(`  → p50 ${round(result.p50Ms)} ms, p99 ${round(result.p99Ms)} ms (server p50 ${round(server.p50Ms)} ms, p99 ${round(server.p99Ms)} ms)`);
    }
    log("latency: the raw-SQL floor at 8 connections…");
    const latencyFloor = await measureFloorLatency(stack, 8, config.latencyBatchesPerLevel);
    log(`  → p50 ${round(latencyFloor.p50Ms)} ms, p99 ${round(latencyFloor.p99Ms)} ms`);
    const thinApiLatency: LatencyResult[] = [];
    for (const sharedList of [false, true]) {
      log(`latency: the thinnest HTTP API at 8 devices${sharedList ? " of one shared list" : ""}…`);
      const thin = await measureThinApiLatency(stack, 8, config.latencyBatchesPerLevel, sharedList);
      thinApiLatency.push(thin);
      log(`  → p50 ${round(thin.p50Ms)} ms, p99 ${round(thin.p99Ms)} ms`);
    }

    // ---- sustained ----------------------------------------------------------------
    log(`sustained: ${config.sustained.devices} devices pushing and pulling for ${config.sustained.seconds} s…`);
    const sustained = await measureSustainedLoad(stack, pid, config.sustained, log);
    await remember("sustained load");
    log(`  → ${round(sustained.opsPerSecond, 0)} ops/s, push p99 ${round(sustained.pushP99Ms)} ms, pull p99 ${round(sustained.pullP99Ms)} ms, RSS ${round(sustained.rss.startMb)} → ${round(sustained.rss.endMb)} MB`);

    const memory = await readMemory(pid);
    log(`memory: deno peak RSS ${round(memory.peakRssMb)} MB (now ${round(memory.currentRssMb)} MB)`);
    const pgVersion = (await stack.ownerSql<{ v: string }[]>`select current_setting('server_version') as v`)[0].v;
    const results = { push, pushEdits, pull: { api: pullApi, floor: pullSql, ratio: pullRatio, server: pullServer, httpFloorMs: pullHttpFloor.ms, authenticatedRequestMs }, rls, latency, latencyServer, latencyFloor, thinApiLatency, sustained, memory, memoryTimeline, cpu };
    const breakdown = { per_request: fixedSteps, push_500: pushSteps, pull_page: pullSteps };
    return { results, breakdown, pgVersion };
  } finally {
    await stack.stop();
  }
}

/**
 * The database-size and scope axes on fresh stacks of their own (the other
 * users' rows never touch the measurements above): the push with a grown
 * ledger, side by side on two stacks (bench/push-ledger-scale.ts), and the
 * pull by scopes per user on the first of them; then the pull with other
 * users' rows, on two more fresh stacks side by side (bench/pull-scope-cost.ts).
 */
async function scaleRun(config: BenchConfig) {
  const measured = await withStacks(async (noneStack, ledgerStack) => {
    const ledger = await measurePushLedgerScale(noneStack, ledgerStack, config.ledger, log);
    log("  → " + formatLedger(ledger));
    const scopesPerUser = await measureScopesPerUser(noneStack, config.scopesPerUser, log);
    const memories = await Promise.all([noneStack, ledgerStack].map((stack) => readMemory(stack.server.process.pid!)));
    const memory = memories.reduce((a, b) => (b.peakRssMb > a.peakRssMb ? b : a));
    return { ledger, scopesPerUser, memory };
  });
  const scope = await withStacks((noneStack, othersStack) => measurePullScopeCost(noneStack, othersStack, config.scope, log));
  return { ...measured, scope };
}

/** Runs `measure` on two fresh stacks, stopping both whatever happens. */
async function withStacks<T>(measure: (a: BenchStack, b: BenchStack) => Promise<T>): Promise<T> {
  const a = await startBenchStack(log);
  try {
    const b = await startBenchStack(log);
    try {
      return await measure(a, b);
    } finally {
      await b.stop();
    }
  } finally {
    await a.stop();
  }
}

/** The most recent results file before this run's (the same date's counts: it is about to be replaced). */
async function previousResults(dir: string): Promise<{ file: string; results: BenchResults } | undefined> {
  const files = (await readdir(dir).catch(() => [] as string[])).filter((f) => /^\d{4}-\d{2}-\d{2}\.json$/.test(f)).sort();
  const last = files.at(-1);
  if (!last) return undefined;
  const parsed = JSON.parse(await readFile(path.join(dir, last), "utf8")) as { started_at?: string; results: BenchResults };
  return { file: `${last} (${parsed.started_at ?? "?"})`, results: parsed.results };
}

async function main(): Promise<void> {
  const config = benchConfigFromEnv();
  const startedAt = new Date();
  // Other work on the machine skews every figure: the load is recorded with them.
  const loadAtStart = os.loadavg();
  log(`bench: load average ${loadAtStart.map((l) => round(l, 2)).join(" ")} on ${os.cpus().length} cores`);
  // The measured server must not download and transpile its dependencies itself
  // (a machine's first run): that memory would stay in its RSS (scripts/lib/deno.ts).
  execFileSync(DENO, denoInstallArgs(), { cwd: ROOT, env: denoEnv({}), stdio: ["ignore", "ignore", "inherit"] });
  const { results: mainResults, breakdown, pgVersion } = await mainRun(config);
  const { ledger, scopesPerUser, scope, memory: scaleMemory } = await scaleRun(config);
  log(`  → pull with ${scope.otherRows} other rows / with none: first page ${round(scope.ratios.firstPageMs, 2)}×, full sync ${round(scope.ratios.fullSyncMs, 2)}×, incremental page ${round(scope.ratios.incrementalPageMs, 2)}×, up to date ${round(scope.ratios.upToDateMs, 2)}×`);

  // ---- report ----------------------------------------------------------------
  // Peak RSS over the whole bench: both function servers (main run, then the scale run's).
  const memory = { ...mainResults.memory, peakRssMb: Math.max(mainResults.memory.peakRssMb, scaleMemory.peakRssMb) };
  const results: BenchResults = { ...mainResults, memory, scope, ledger, scopesPerUser };
  const resultsDir = path.join(ROOT, "bench", "results");
  const previous = await previousResults(resultsDir);
  const goals = withPrevious(evaluateGoals(results), previous?.results);
  console.log("\n" + formatTable(results, goals));
  if (previous) console.log(`(previous run: bench/results/${previous.file})`);
  console.log("\n" + formatScope(scope));
  console.log("\n" + formatLedger(ledger));
  console.log("\n" + formatScopesPerUser(scopesPerUser));
  console.log("\n" + formatSustained(mainResults.sustained));
  console.log("\n" + formatBreakdown(breakdown));
  console.log("\n" + formatCpu(results.cpu));
  console.log("\nfunction server memory after each phase: " + results.memoryTimeline.map((m) => `${m.after} ${round(m.currentRssMb)} MB (peak ${round(m.peakRssMb)})`).join(", ") +
    `; the scale run's server: peak ${round(scaleMemory.peakRssMb)} MB`);

  const denoVersion = execFileSync(DENO, ["--version"], { encoding: "utf8" }).split("\n")[0];
  const date = startedAt.toISOString().slice(0, 10);
  const file = path.join(resultsDir, `${date}.json`);
  await mkdir(resultsDir, { recursive: true });
  await writeFile(file, JSON.stringify({
    started_at: startedAt.toISOString(),
    finished_at: new Date().toISOString(),
    load_average: { at_start: loadAtStart, at_end: os.loadavg() },
    machine: { cpus: os.cpus().length, cpu_model: os.cpus()[0]?.model, memory_gb: round(os.totalmem() / 2 ** 30), node: process.version, deno: denoVersion, postgres: pgVersion },
    config,
    results,
    breakdown,
    goals,
    previous: previous?.file ?? null,
  }, null, 2) + "\n");
  const chart = path.join(resultsDir, `${date}.svg`);
  await writeFile(chart, await renderChart(results, `${startedAt.toISOString().slice(0, 16).replace("T", " ")} UTC, ${os.cpus().length} cores shared by client, function and database, load ${loadAtStart.map((l) => round(l, 1)).join(" ")}`));
  log(`\nwrote ${path.relative(ROOT, file)} and ${path.relative(ROOT, chart)}`);
  log(`bench: ${round((Date.now() - startedAt.getTime()) / 60_000)} minutes`);
}

main().then(
  () => process.exit(0),
  async (error) => {
    console.error(error instanceof Error ? error.stack : error);
    await runCleanups();
    process.exit(1);
  },
);

// Where the time of one 500-op push and one 1000-record pull page goes: each
// layer of the function measured on its own, in this process (Node runs the
// same V8 and the same TypeScript the function runs), next to the raw-SQL
// floor and the server's own per-request duration. Every step is the median
// of `samples` runs on fresh data, after a warm-up.
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import path from "node:path";
import { DENO, denoEnv } from "../scripts/lib/deno.ts";
import { ROOT } from "../scripts/lib/paths.ts";
import { syncBatchRequestSchema } from "../functions/_shared/schemas/sync.ts";
import { DEFAULT_LIMITS } from "../functions/_shared/limits.ts";
import { readChangesPage } from "../functions/api/sync/pull-store.ts";
import { planBatch } from "../functions/api/sync/plan-batch.ts";
import { pushBatch } from "../functions/api/sync/push-store.ts";
import type { Tx } from "../functions/api/lib/db.ts";
import type { BenchStack, BenchUser } from "./bench-stack.ts";
import { median, now } from "./measure.ts";
import { batchBody, reserveSeqs, taskRows } from "./push-throughput.ts";

export interface Step {
  step: string;
  ms: number;
}

async function timeMedian(samples: number, run: (i: number) => Promise<unknown> | unknown): Promise<number> {
  await run(-1);
  const times: number[] = [];
  for (let i = 0; i < samples; i++) {
    const t0 = now();
    await run(i);
    times.push(now() - t0);
  }
  return median(times);
}

function claimsOf(user: BenchUser): string {
  return JSON.stringify({ sub: user.userId, role: "authenticated", session_id: user.sessionId, aud: "authenticated" });
}

export async function pushBreakdown(stack: BenchStack, user: BenchUser, floorUser: BenchUser, batchOps: number, samples: number): Promise<Step[]> {
  const deviceId = randomUUID();
  const bodies = Array.from({ length: samples + 1 }, () => batchBody(taskRows(batchOps), deviceId));
  const at = (i: number) => bodies[i + 1];
  const steps: Step[] = [];

  steps.push({ step: `JSON.parse of the request body (${Math.round(bodies[0].length / 1024)} KiB)`, ms: await timeMedian(samples, (i) => JSON.parse(at(i))) });
  steps.push({ step: "zod validation of the batch (syncBatchRequestSchema)", ms: await timeMedian(samples, (i) => syncBatchRequestSchema.parse(JSON.parse(at(i)))) - steps[0].ms });
  const parsed = bodies.map((b) => syncBatchRequestSchema.parse(JSON.parse(b)));
  const plans = parsed.map((batch) => planBatch(batch.ops, deviceId, { lastSeq: 0, liveRecords: 0, ledger: new Map(), records: new Map() }, DEFAULT_LIMITS, new Date().toISOString()));
  steps.push({
    step: "planBatch: per-op checks + merge (pure TypeScript)",
    ms: await timeMedian(samples, (i) => planBatch(parsed[i + 1].ops, deviceId, { lastSeq: 0, liveRecords: 0, ledger: new Map(), records: new Map() }, DEFAULT_LIMITS, new Date().toISOString())),
  });
  steps.push({ step: "JSON.stringify of the response", ms: await timeMedian(samples, (i) => JSON.stringify({ results: plans[i + 1].results, server_time: "x" })) });
  steps.push({
    step: "JSON.stringify of the write statements' parameters (records + ledger)",
    ms: await timeMedian(samples, (i) => JSON.stringify(plans[i + 1].writes).length + JSON.stringify(plans[i + 1].ledgerRows).length),
  });

  // The function's SQL, as the function runs it (role authenticated + claims, one transaction).
  const claims = claimsOf(user);
  steps.push({
    step: "database: pushBatch's 4 statements in a transaction as authenticated (incl. planBatch)",
    ms: await timeMedian(samples, async (i) => {
      const batch = syncBatchRequestSchema.parse(JSON.parse(i < 0 ? bodies[0] : batchBody(taskRows(batchOps), deviceId)));
      await stack.ownerSql.begin(async (tx) => {
        await tx`select set_config('request.jwt.claims', ${claims}, true), set_config('role', 'authenticated', true)`;
        await pushBatch(tx, batch, DEFAULT_LIMITS);
      });
    }),
  });

  let seq = 0;
  await reserveSeqs(stack.ownerSql, floorUser.userId, 10_000_000);
  const sql = stack.ownerSql;
  steps.push({
    step: `raw-SQL floor: one ${batchOps}-row upsert (no ledger, no merge)`,
    ms: await timeMedian(samples, async () => {
      const rows = taskRows(batchOps).map((row) => ({ user_id: floorUser.userId, collection: "tasks", id: row.id, version: ++seq, change_seq: seq, data: sql.json(row.data), deleted: false }));
      await sql`insert into app_private.records ${sql(rows, "user_id", "collection", "id", "version", "change_seq", "data", "deleted")}`;
    }),
  });
  steps.push({
    step: "database: the per-request auth round trips (rate-limit counter + session check)",
    ms: await timeMedian(samples, async () => {
      await sql`select hits from app_private.hit_rate_limit(${user.userId}::uuid, 'sync.batch', 60)`;
      await sql.begin(async (tx) => {
        await tx`select exists (select 1 from auth.sessions s where s.id = ${user.sessionId}::uuid) as live,
                        set_config('request.jwt.claims', ${claims}, true), set_config('role', 'authenticated', true)`;
      });
    }),
  });
  return steps;
}

export async function pullBreakdown(stack: BenchStack, user: BenchUser, pageSize: number, samples: number, totalRecords: number): Promise<Step[]> {
  const sql = stack.ownerSql;
  const claims = claimsOf(user);
  const seqAt = (i: number) => Math.max(0, Math.floor(((i + 1) * 7919) % Math.max(1, totalRecords - pageSize)));
  const steps: Step[] = [];
  let sampleText = "";
  steps.push({
    step: `raw-SQL floor: one keyset page, JSON built by Postgres (${pageSize} records)`,
    ms: await timeMedian(samples, async (i) => {
      const [row] = await sql<{ changes: string }[]>`
        select coalesce(json_agg(json_build_object('collection', p.collection, 'id', p.id, 'version', p.version, 'deleted', p.deleted, 'data', p.data,
                 'updated_at', to_char(p.updated_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')) order by p.change_seq), '[]'::json)::text as changes
          from (select * from app_private.records r where r.user_id = ${user.userId}::uuid and r.change_seq > ${seqAt(i)}::bigint
                 order by r.change_seq limit ${pageSize}) p`;
      sampleText = row.changes;
    }),
  });
  steps.push({ step: `JSON.parse of one page on the client (${Math.round(sampleText.length / 1024)} KiB)`, ms: await timeMedian(samples, () => JSON.parse(sampleText)) });
  steps.push({
    step: "readChangesPage (the function's statement) as the owner, no transaction",
    ms: await timeMedian(samples, async (i) => readChangesPage(sql as unknown as Tx, { userId: user.userId, afterSeq: seqAt(i), tombstoneFloor: null, collections: null, limit: pageSize })),
  });
  steps.push({
    step: "readChangesPage in a transaction as authenticated (what the function runs)",
    ms: await timeMedian(samples, async (i) => {
      await sql.begin(async (tx) => {
        await tx`select set_config('request.jwt.claims', ${claims}, true), set_config('role', 'authenticated', true)`;
        await readChangesPage(tx, { userId: user.userId, afterSeq: seqAt(i), tombstoneFloor: null, collections: null, limit: pageSize });
      });
    }),
  });
  steps.push({
    step: "database: the per-request rate-limit round trip",
    ms: await timeMedian(samples, async () => sql`select hits from app_private.hit_rate_limit(${user.userId}::uuid, 'sync.pull', 60)`),
  });
  return steps;
}

interface PlanNode {
  "Node Type": string;
  "Relation Name"?: string;
  "Actual Total Time": number;
  Plans?: PlanNode[];
}
interface ExplainOutput {
  Plan: PlanNode;
  Triggers?: { "Trigger Name": string; Relation: string; Time: number; Calls: number }[];
  "Execution Time": number;
  "Planning Time": number;
}

function modifyNodes(node: PlanNode, out: PlanNode[] = []): PlanNode[] {
  if (node["Node Type"] === "ModifyTable") out.push(node);
  for (const child of node.Plans ?? []) modifyNodes(child, out);
  return out;
}

/**
 * Runs pushBatch once with every statement timed from the client, and its
 * last (write) statement under EXPLAIN ANALYZE — which executes it — so
 * Postgres says how its time splits between the records upsert, the ledger
 * insert and the triggers.
 */
export async function pushStatementProfile(stack: BenchStack, user: BenchUser, batchOps: number): Promise<Step[]> {
  const deviceId = randomUUID();
  const claims = claimsOf(user);
  const labels = ["1 lock the sync head (insert … on conflict)", "2 read ledger rows + current records", "3 advance the head", "4 write records + ledger rows"];
  const timings = new Map<string, number[]>();
  const totals: number[] = [];
  // Statements 3 and 4 return nothing pushBatch reads, so they can run under EXPLAIN ANALYZE.
  const explained = new Map<string, ExplainOutput>();
  const rounds = 7;
  // Round 0 warms up, the last runs statement 4 under EXPLAIN ANALYZE, the others are timed.
  for (let round = 0; round < rounds; round++) {
    const timedRound = round > 0 && round < rounds - 1;
    const explainRound = round === rounds - 1;
    const started = now();
    const batch = syncBatchRequestSchema.parse(JSON.parse(batchBody(taskRows(batchOps), deviceId)));
    await stack.ownerSql.begin(async (tx) => {
      await tx`select set_config('request.jwt.claims', ${claims}, true), set_config('role', 'authenticated', true)`;
      let index = 0;
      const timed = new Proxy(tx, {
        get(target, property, receiver) {
          if (property !== "unsafe") return Reflect.get(target, property, receiver);
          // pushBatch pipelines statements 1+2 and 3+4, so a statement's time
          // here includes waiting for the one sent just before it.
          return async (query: string, params?: unknown[], options?: { prepare?: boolean }) => {
            const label = labels[index++] ?? `statement ${index}`;
            const explain = explainRound && (label.startsWith("3") || label.startsWith("4"));
            const t0 = now();
            const rows = await target.unsafe(explain ? `explain (analyze, format json) ${query}` : query, params as never[], explain ? undefined : options);
            if (timedRound) timings.set(label, [...(timings.get(label) ?? []), now() - t0]);
            if (explain) explained.set(label, (rows[0] as unknown as { "QUERY PLAN": ExplainOutput[] })["QUERY PLAN"][0]);
            return rows;
          };
        },
      });
      await pushBatch(timed, batch, DEFAULT_LIMITS);
    });
    if (timedRound) totals.push(now() - started);
  }
  const steps: Step[] = [{ step: "  pushBatch transaction, total (BEGIN … COMMIT)", ms: median(totals) }];
  for (const [label, times] of timings) steps.push({ step: `  pushBatch statement ${label}`, ms: median(times) });
  const statementsMs = [...timings.values()].reduce((sum, times) => sum + median(times), 0);
  steps.push({ step: "  rest of the transaction: BEGIN, claims, planBatch, COMMIT (WAL flush)", ms: median(totals) - statementsMs });
  for (const [label, plan] of explained) {
    steps.push({ step: `  statement ${label.slice(0, 1)} under EXPLAIN ANALYZE: planning (parses the JSON parameters)`, ms: plan["Planning Time"] });
    steps.push({ step: `  statement ${label.slice(0, 1)} under EXPLAIN ANALYZE: execution time in Postgres`, ms: plan["Execution Time"] });
    for (const node of modifyNodes(plan.Plan)) {
      steps.push({ step: `    write ${node["Relation Name"] ?? ""} (incl. index updates)`, ms: node["Actual Total Time"] });
    }
    for (const trigger of plan.Triggers ?? []) {
      const name = trigger["Trigger Name"].startsWith("RI_ConstraintTrigger") ? "foreign key check" : `trigger ${trigger["Trigger Name"]}`;
      steps.push({ step: `    ${name} on ${trigger.Relation} (${trigger.Calls} calls)`, ms: trigger.Time });
    }
  }
  return steps;
}

/** The floor's page query and a bare round trip timed from inside Deno (bench/deno-db-probe.ts). */
export async function denoDatabaseProbe(stack: BenchStack, user: BenchUser, pageSize: number, samples: number, records: number): Promise<{ roundTripMs: number; pageMs: number }> {
  const output = await new Promise<string>((resolve, reject) => {
    const child = spawn(DENO, [
      "run", "--config", path.join(ROOT, "functions/api/deno.json"), "--lock", path.join(ROOT, "functions/api/deno.lock"),
      "--allow-net", "--allow-env", "--allow-read", path.join(ROOT, "bench/deno-db-probe.ts"),
    ], {
      env: denoEnv({ PROBE_DB_URL: stack.database.ownerDbUrl, PROBE_USER_ID: user.userId, PROBE_PAGE_SIZE: String(pageSize), PROBE_SAMPLES: String(samples), PROBE_RECORDS: String(records) }),
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    child.on("exit", (code) => (code === 0 ? resolve(out) : reject(new Error(`deno-db-probe exited with ${code}`))));
  });
  return JSON.parse(output.trim().split("\n").pop() ?? "{}") as { roundTripMs: number; pageMs: number };
}

/** Median wall time of routes that do (almost) nothing: what every request pays before its own work. */
export async function fixedRequestCosts(stack: BenchStack, user: BenchUser, samples: number): Promise<Step[]> {
  const get = (path: string, token?: string) => async () => {
    const response = await fetch(`${stack.apiUrl}${path}`, token ? { headers: { authorization: `Bearer ${token}` } } : {});
    await response.text();
    if (response.status !== 200) throw new Error(`GET ${path} answered ${response.status}`);
  };
  return [
    { step: "GET /v1/meta (routing, logging; no auth, no database)", ms: await timeMedian(samples, get("/v1/meta")) },
    { step: "GET /v1/whoami (+ JWT check, rate-limit round trip, session-check transaction)", ms: await timeMedian(samples, get("/v1/whoami", user.token)) },
  ];
}

interface TimedNode {
  "Node Type": string;
  "Relation Name"?: string;
  "CTE Name"?: string;
  "Subplan Name"?: string;
  "Actual Total Time": number;
  "Actual Loops": number;
  "Actual Rows": number;
  Plans?: TimedNode[];
}

function describeNodes(node: TimedNode, depth: number, out: Step[]): void {
  const name = [node["Node Type"], node["Relation Name"] ?? node["CTE Name"] ?? "", node["Subplan Name"] ? `(${node["Subplan Name"]})` : ""].filter(Boolean).join(" ");
  out.push({ step: `${"  ".repeat(depth + 2)}${name}: ${node["Actual Rows"]} rows × ${node["Actual Loops"]} loops (inclusive time)`, ms: node["Actual Total Time"] * node["Actual Loops"] });
  for (const child of node.Plans ?? []) if (depth < 3) describeNodes(child, depth + 1, out);
}

/**
 * The pull's statement (readChangesPage) under EXPLAIN ANALYZE as the
 * function runs it, next to the floor's page query: where Postgres spends a
 * page's time.
 */
export async function pullStatementProfile(stack: BenchStack, user: BenchUser, pageSize: number, afterSeq: number): Promise<Step[]> {
  const claims = claimsOf(user);
  const steps: Step[] = [];
  await stack.ownerSql.begin(async (tx) => {
    await tx`select set_config('request.jwt.claims', ${claims}, true), set_config('role', 'authenticated', true)`;
    let plan: { Plan: TimedNode; "Execution Time": number; "Planning Time": number } | undefined;
    // readChangesPage runs one tagged-template query: run it under EXPLAIN ANALYZE instead.
    const explaining = new Proxy(tx, {
      apply(target, _this, [strings, ...values]: [TemplateStringsArray, ...unknown[]]) {
        const prefixed = Object.assign([`explain (analyze, format json) ${strings[0]}`, ...strings.slice(1)], { raw: [`explain (analyze, format json) ${strings.raw[0]}`, ...strings.raw.slice(1)] });
        return (target as unknown as (s: TemplateStringsArray, ...v: unknown[]) => Promise<{ "QUERY PLAN": (typeof plan)[] }[]>)(prefixed, ...values).then((rows) => {
          plan = rows[0]["QUERY PLAN"][0];
          return [{ head_seq: null, purged_through_seq: null, fetched: 0, last_page_seq: null, changes: "[]" }];
        });
      },
    });
    await readChangesPage(explaining as unknown as Tx, { userId: user.userId, afterSeq, tombstoneFloor: null, collections: null, limit: pageSize });
    if (plan) {
      steps.push({ step: "  readChangesPage under EXPLAIN ANALYZE (as authenticated): planning", ms: plan["Planning Time"] });
      steps.push({ step: "  readChangesPage under EXPLAIN ANALYZE (as authenticated): execution", ms: plan["Execution Time"] });
      describeNodes(plan.Plan, 0, steps);
    }
    const [floor] = await tx.unsafe<{ "QUERY PLAN": { "Execution Time": number; "Planning Time": number }[] }[]>(
      `explain (analyze, format json)
       select coalesce(json_agg(json_build_object('collection', p.collection, 'id', p.id, 'version', p.version, 'deleted', p.deleted, 'data', p.data,
                'updated_at', to_char(p.updated_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')) order by p.change_seq), '[]'::json)::text
         from (select * from app_private.records r where r.user_id = $1::uuid and r.change_seq > $2::bigint order by r.change_seq limit $3) p`,
      [user.userId, afterSeq, pageSize],
    );
    steps.push({ step: "  the floor's page query under EXPLAIN ANALYZE: execution", ms: floor["QUERY PLAN"][0]["Execution Time"] });
  });
  return steps;
}

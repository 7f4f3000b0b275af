// Where the time of one 500-op push and one 1000-record pull page goes: each
// layer of the function measured on its own, in this process (Node runs the
// same V8 and the same TypeScript the function runs), next to the raw-SQL
// floor and the server's own per-request duration. Every step is the median
// of `samples` runs on fresh data, after a warm-up.
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import path from "node:path";
import { DENO, denoEnv, FUNCTION_CONFIG_ARGS } from "../scripts/lib/deno.ts";
import { ROOT } from "../scripts/lib/paths.ts";
import { syncBatchRequestSchema } from "../functions/_shared/schemas/sync.ts";
import { DEFAULT_LIMITS } from "../functions/_shared/limits.ts";
import { COLUMNS as PAGE_COLUMNS, readChangesPage } from "../functions/api/sync/pull-store.ts";
import { type BatchState, planBatch, recordKey } from "../functions/api/sync/plan-batch.ts";
import type { FullKey } from "../functions/api/sync/plan-pull.ts";
import { pushBatch } from "../functions/api/sync/push-store.ts";
import type { Tx } from "../functions/api/lib/db.ts";
import type { BenchStack, BenchUser } from "./bench-stack.ts";
import { median, now } from "./measure.ts";
import { FLOOR_PAGE_SQL, floorPage } from "./pull-throughput.ts";
import { batchBody, connectAs, insertTasks, taskRows } from "./push-throughput.ts";

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

/** What planBatch knows about a batch of new tasks: their list exists and is visible, the task ids are free. */
function stateWithList(listId: string): BatchState {
  const at = new Date().toISOString();
  const list = { collection: "lists", id: listId, version: 1, deleted: false, data: { title: "Personal" }, field_versions: {}, created_at: at, updated_at: at, deleted_at: null };
  return { liveRecords: 0, ledger: new Map(), records: new Map([[recordKey("lists", listId), list]]), writable: new Set() };
}

export async function pushBreakdown(stack: BenchStack, user: BenchUser, floorUser: BenchUser, batchOps: number, samples: number): Promise<Step[]> {
  const bodies = Array.from({ length: samples + 1 }, () => batchBody(taskRows(user.listId, batchOps), user.deviceId));
  const at = (i: number) => bodies[i + 1];
  const steps: Step[] = [];

  steps.push({ step: `JSON.parse of the request body (${Math.round(bodies[0].length / 1024)} KiB)`, ms: await timeMedian(samples, (i) => JSON.parse(at(i))) });
  steps.push({ step: "zod validation of the batch (syncBatchRequestSchema)", ms: await timeMedian(samples, (i) => syncBatchRequestSchema.parse(JSON.parse(at(i)))) - steps[0].ms });
  const parsed = bodies.map((b) => syncBatchRequestSchema.parse(JSON.parse(b)));
  const state = stateWithList(user.listId);
  const plan = (i: number) => planBatch(parsed[i].ops, user.deviceId, state, DEFAULT_LIMITS, new Date().toISOString());
  const plans = parsed.map((_, i) => plan(i));
  const applied = plans[0].ops.filter((p) => p.result.status === "applied").length;
  if (applied !== batchOps) throw new Error(`planBatch applied ${applied} of ${batchOps} ops: ${JSON.stringify(plans[0].ops[0].result)}`);
  steps.push({ step: "planBatch: per-op checks, data validation, merge (pure TypeScript)", ms: await timeMedian(samples, (i) => plan(i + 1)) });
  steps.push({ step: "JSON.stringify of the response", ms: await timeMedian(samples, (i) => JSON.stringify({ results: plans[i + 1].ops.map((p) => p.result), server_time: "x" })) });
  steps.push({ step: "JSON.stringify of the write parameter (sync_apply groups)", ms: await timeMedian(samples, (i) => JSON.stringify(plans[i + 1].groups).length) });

  // The function's SQL, as the function runs it (role authenticated + claims, one transaction).
  const claims = claimsOf(user);
  steps.push({
    step: "database: pushBatch's statements in a transaction as authenticated (incl. planBatch)",
    // The parsed batches above: planBatch never wrote them, and building one is not the database's time.
    ms: await timeMedian(samples, async (i) => {
      await stack.ownerSql.begin(async (tx) => {
        await tx`select set_config('request.jwt.claims', ${claims}, true), set_config('role', 'authenticated', true)`;
        await pushBatch(tx, parsed[i + 1], { sub: user.userId, session_id: user.sessionId }, DEFAULT_LIMITS);
      });
    }),
  });

  const floorSql = await connectAs(stack, floorUser);
  try {
    steps.push({
      step: `raw-SQL floor: one ${batchOps}-row insert into public.tasks as authenticated (no ledger, no merge)`,
      ms: await (async () => {
        const rows = Array.from({ length: samples + 1 }, () => taskRows(floorUser.listId, batchOps));
        return await timeMedian(samples, (i) => insertTasks(floorSql, rows[i + 1]));
      })(),
    });
  } finally {
    await floorSql.end({ timeout: 5 });
  }
  const sql = stack.ownerSql;
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

/** Task ids of the caller at `count` evenly spread positions: where sampled pull pages start. */
async function samplePositions(stack: BenchStack, user: BenchUser, count: number, totalRecords: number, pageSize: number): Promise<string[]> {
  const step = Math.max(1, Math.floor(Math.max(1, totalRecords - pageSize) / (count + 1)));
  const rows = await stack.ownerSql<{ id: string }[]>`
    select id::text from (select t.id, row_number() over (order by t.id) as n from public.tasks t where t.list_id = ${user.listId}::uuid) x
     where x.n % ${step}::integer = 0 order by x.id limit ${count}::integer`;
  return rows.map((r) => r.id);
}

export async function pullBreakdown(stack: BenchStack, user: BenchUser, pageSize: number, samples: number, totalRecords: number): Promise<Step[]> {
  const sql = stack.ownerSql;
  const claims = claimsOf(user);
  const positions = await samplePositions(stack, user, samples + 1, totalRecords, pageSize);
  const afterId = (i: number) => positions[(i + 1) % positions.length];
  const steps: Step[] = [];
  let sampleText = "";
  steps.push({
    step: `raw-SQL floor: one keyset page of public.tasks + sync state, JSON built by Postgres (${pageSize} records)`,
    ms: await timeMedian(samples, async (i) => {
      sampleText = (await floorPage(sql, [user.listId], afterId(i), pageSize)).text;
    }),
  });
  steps.push({ step: `JSON.parse of one page on the client (${Math.round(sampleText.length / 1024)} KiB)`, ms: await timeMedian(samples, () => JSON.parse(sampleText)) });
  steps.push({
    step: "readChangesPage (the function's full-sync statement) in a transaction as authenticated",
    ms: await timeMedian(samples, async (i) => {
      await sql.begin(async (tx) => {
        await tx`select set_config('request.jwt.claims', ${claims}, true), set_config('role', 'authenticated', true)`;
        await readChangesPage(tx, { mode: "full", upper: null, after: [user.listId, "tasks", afterId(i)] as FullKey }, null, pageSize);
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
  Triggers?: { "Trigger Name": string; "Constraint Name"?: string; Relation: string; Time: number; Calls: number }[];
  "Execution Time": number;
  "Planning Time": number;
}

function modifyNodes(node: PlanNode, out: PlanNode[] = []): PlanNode[] {
  if (node["Node Type"] === "ModifyTable") out.push(node);
  for (const child of node.Plans ?? []) modifyNodes(child, out);
  return out;
}

// pushBatch's statements, recognised by their text (functions/api/sync/push-store.ts).
const PUSH_STATEMENTS: [label: string, matches: (sql: string) => boolean][] = [
  ["1 lock the named rows (select … for no key update, per collection)", (q) => q.includes("update of t")],
  ["2 read ledger, sync state, rows, usage, device (and set the device)", (q) => q.includes(" as ledger")],
  ["3 write the rows (app_private.sync_apply)", (q) => q.includes("app_private.sync_apply")],
  ["4 read the written rows back", (q) => q.includes("|| ']' as records")],
  ["5 record the ledger rows", (q) => q.includes("insert into app_private.sync_ops")],
];
const labelOf = (query: string) => PUSH_STATEMENTS.find(([, matches]) => matches(query))?.[0] ?? "other statement";

/** The insert app_private.sync_apply runs for one insert group (its first statement), for EXPLAIN ANALYZE. */
function insertGroupSql(table: string, columns: string[]): string {
  const list = columns.map((c) => `, "${c}"`).join("");
  return `with w as (insert into ${table} (id${list}) select id${list} from jsonb_populate_recordset(null::${table}, $1)) ` +
    `select jsonb_agg(x.id) from jsonb_to_recordset($1) as x(id uuid)`;
}

function explainSteps(label: string, plan: ExplainOutput): Step[] {
  const steps: Step[] = [
    { step: `  ${label} under EXPLAIN ANALYZE: planning`, ms: plan["Planning Time"] },
    { step: `  ${label} under EXPLAIN ANALYZE: execution`, ms: plan["Execution Time"] },
  ];
  for (const node of modifyNodes(plan.Plan)) steps.push({ step: `    write ${node["Relation Name"] ?? ""} (incl. index updates)`, ms: node["Actual Total Time"] });
  for (const trigger of plan.Triggers ?? []) {
    const name = trigger["Trigger Name"].startsWith("RI_ConstraintTrigger") ? `foreign key check ${trigger["Constraint Name"] ?? ""}` : `trigger ${trigger["Trigger Name"]}`;
    steps.push({ step: `    ${name} on ${trigger.Relation} (${trigger.Calls} calls)`, ms: trigger.Time });
  }
  return steps;
}

/**
 * Runs pushBatch with every statement timed from the client; in the last
 * round the write runs as the insert app_private.sync_apply would run (same
 * statement) under EXPLAIN ANALYZE — which executes it, sync triggers
 * included — followed by its read-back, and the ledger insert is explained
 * too, so Postgres says where the write's time goes.
 */
export async function pushStatementProfile(stack: BenchStack, user: BenchUser, batchOps: number): Promise<Step[]> {
  const claims = claimsOf(user);
  const timings = new Map<string, number[]>();
  const totals: number[] = [];
  const explained: Step[] = [];
  const rounds = 7;
  // Round 0 warms up, the last runs under EXPLAIN ANALYZE, the others are timed.
  for (let round = 0; round < rounds; round++) {
    const timedRound = round > 0 && round < rounds - 1;
    const explainRound = round === rounds - 1;
    const batch = syncBatchRequestSchema.parse(JSON.parse(batchBody(taskRows(user.listId, batchOps), user.deviceId)));
    const started = now();
    await stack.ownerSql.begin(async (tx) => {
      await tx`select set_config('request.jwt.claims', ${claims}, true), set_config('role', 'authenticated', true)`;
      const explain = async (label: string, query: string, params: unknown[]) => {
        const [row] = await tx.unsafe<{ "QUERY PLAN": ExplainOutput[] }[]>(`explain (analyze, format json) ${query}`, params as never[]);
        explained.push(...explainSteps(label, row["QUERY PLAN"][0]));
      };
      // pushBatch pipelines statements, and a connection answers them in
      // order: each is timed from when it was sent or the one before it was
      // answered, whichever is later, so none counts the wait for another.
      let lastAnswered = 0;
      const timed = new Proxy(tx, {
        get(target, property, receiver) {
          if (property !== "unsafe") return Reflect.get(target, property, receiver);
          // Sent when called, and answered as postgres.js answers a query: awaited, or
          // `.execute()` (pushBatch sends its set-up that way, ahead of its locks).
          const statement = async (query: string, params: unknown[] = [], options?: { prepare?: boolean }) => {
            const label = labelOf(query);
            if (explainRound && label.startsWith("3")) {
              const groups = JSON.parse(params[0] as string) as { collection: string; kind: string; columns: string[]; rows: { id: string }[] }[];
              for (const group of groups.filter((g) => g.kind === "insert" && g.collection === "tasks")) {
                // jsonb parameters as values: postgres.js serialises them (a string would become a JSON string).
                await explain("sync_apply's insert into public.tasks", insertGroupSql("public.tasks", group.columns), [group.rows]);
              }
              return [{ result: { failed: [] } }];
            }
            if (explainRound && label.startsWith("4")) await explain("the read-back of the written rows", query, params);
            if (explainRound && label.startsWith("5")) {
              await explain("the ledger insert", query, params);
              return [];
            }
            if (explainRound && label.startsWith("2")) await explain("the read statement", query, params);
            const t0 = now();
            const rows = await target.unsafe(query, params as never[], options);
            const answered = now();
            if (timedRound) timings.set(label, [...(timings.get(label) ?? []), answered - Math.max(t0, lastAnswered)]);
            lastAnswered = answered;
            return rows;
          };
          return (...args: Parameters<typeof statement>) => {
            const answer = statement(...args);
            return Object.assign(answer, { execute: () => answer });
          };
        },
      });
      await pushBatch(timed, batch, { sub: user.userId, session_id: user.sessionId }, DEFAULT_LIMITS);
    });
    if (timedRound) totals.push(now() - started);
  }
  const steps: Step[] = [{ step: "  pushBatch transaction, total (BEGIN … COMMIT)", ms: median(totals) }];
  const ordered = [...timings].sort(([a], [b]) => a.localeCompare(b));
  for (const [label, times] of ordered) steps.push({ step: `  pushBatch statement ${label}`, ms: median(times) });
  const statementsMs = ordered.reduce((sum, [, times]) => sum + median(times), 0);
  steps.push({ step: "  rest of the transaction: BEGIN, claims, planBatch, COMMIT (WAL flush)", ms: median(totals) - statementsMs });
  return [...steps, ...explained];
}

/** The floor's page query and a bare round trip timed from inside Deno (bench/deno-db-probe.ts). */
export async function denoDatabaseProbe(stack: BenchStack, user: BenchUser, pageSize: number, samples: number, records: number): Promise<{ roundTripMs: number; pageMs: number }> {
  const positions = await samplePositions(stack, user, samples + 1, records, pageSize);
  const output = await new Promise<string>((resolve, reject) => {
    const child = spawn(DENO, [
      "run", ...FUNCTION_CONFIG_ARGS,
      "--allow-net", "--allow-env", "--allow-read", path.join(ROOT, "bench/deno-db-probe.ts"),
    ], {
      env: denoEnv({ PROBE_DB_URL: stack.database.ownerDbUrl, PROBE_SQL: FLOOR_PAGE_SQL, PROBE_LIST_ID: user.listId, PROBE_AFTER_IDS: JSON.stringify(positions), PROBE_PAGE_SIZE: String(pageSize), PROBE_SAMPLES: String(samples) }),
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    child.on("exit", (code) => (code === 0 ? resolve(out) : reject(new Error(`deno-db-probe exited with ${code}`))));
  });
  return JSON.parse(output.trim().split("\n").pop() ?? "{}") as { roundTripMs: number; pageMs: number };
}

/**
 * Median wall time of routes that do (almost) nothing: what every request
 * pays before its own work. `whoamiMs` is an authenticated request doing what
 * every pull pays too: token, rate limit, session check, and the account's
 * creation time read in the session check's transaction (the pull's page
 * statement reads it for its cursor).
 */
export async function fixedRequestCosts(stack: BenchStack, user: BenchUser, samples: number): Promise<{ steps: Step[]; whoamiMs: number }> {
  const get = (path: string, token?: string) => async () => {
    const response = await fetch(`${stack.apiUrl}${path}`, token ? { headers: { authorization: `Bearer ${token}` } } : {});
    await response.text();
    if (response.status !== 200) throw new Error(`GET ${path} answered ${response.status}`);
  };
  const metaMs = await timeMedian(samples, get("/v1/meta"));
  const whoamiMs = await timeMedian(samples, get("/v1/whoami", user.token));
  return {
    whoamiMs,
    steps: [
      { step: "GET /v1/meta (routing, logging, one trivial statement for the database's clock; no auth)", ms: metaMs },
      { step: "GET /v1/whoami (+ JWT check, rate-limit round trip, session-check transaction reading the account's creation time, as the pull does)", ms: whoamiMs },
    ],
  };
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
 * The pull's full-sync statement (readChangesPage) under EXPLAIN ANALYZE as
 * the function runs it, next to the floor's page query: where Postgres
 * spends a page's time.
 */
export async function pullStatementProfile(stack: BenchStack, user: BenchUser, pageSize: number, afterId: string): Promise<Step[]> {
  const claims = claimsOf(user);
  const steps: Step[] = [];
  await stack.ownerSql.begin(async (tx) => {
    await tx`select set_config('request.jwt.claims', ${claims}, true), set_config('role', 'authenticated', true)`;
    let plan: { Plan: TimedNode; "Execution Time": number; "Planning Time": number } | undefined;
    // readChangesPage runs one statement through tx.unsafe: run it under EXPLAIN ANALYZE instead.
    const explaining = new Proxy(tx, {
      get(target, property, receiver) {
        if (property !== "unsafe") return Reflect.get(target, property, receiver);
        return (query: string, params: unknown[]) => {
          const explained = target.unsafe<{ "QUERY PLAN": (typeof plan)[] }[]>(`explain (analyze, format json) ${query}`, params as never[])
            .then((rows) => void (plan = rows[0]["QUERY PLAN"][0]));
          // The page statement is read with .raw(): an empty page, as the bytes Postgres would send.
          const bytes = (text: string) => new TextEncoder().encode(text);
          const empty: Record<(typeof PAGE_COLUMNS)[number], Uint8Array | null> = {
            upper: bytes("1"), snapshot: bytes("1:1:"), horizon: bytes("0"), server_time: bytes(""), fetched: bytes("0"),
            resyncs: bytes("0"), born: null, last_key: null, last_caught_up: bytes("f"), entries: null,
          };
          const emptyPage = Object.assign([PAGE_COLUMNS.map((name) => empty[name])], { columns: PAGE_COLUMNS.map((name) => ({ name })) });
          return Object.assign(explained.then(() => []), { raw: () => explained.then(() => emptyPage) });
        };
      },
    });
    await readChangesPage(explaining, { mode: "full", upper: null, after: [user.listId, "tasks", afterId] as FullKey }, null, pageSize);
    if (plan) {
      steps.push({ step: "  readChangesPage (full sync) under EXPLAIN ANALYZE (as authenticated): planning", ms: plan["Planning Time"] });
      steps.push({ step: "  readChangesPage (full sync) under EXPLAIN ANALYZE (as authenticated): execution", ms: plan["Execution Time"] });
      describeNodes(plan.Plan, 0, steps);
    }
    await tx`select set_config('role', 'tidesync_owner', true)`;
    const [floor] = await tx.unsafe<{ "QUERY PLAN": { "Execution Time": number; "Planning Time": number }[] }[]>(
      `explain (analyze, format json) ${FLOOR_PAGE_SQL}`, [[user.listId], afterId, pageSize] as never[]);
    steps.push({ step: "  the floor's page query under EXPLAIN ANALYZE (as the owner): execution", ms: floor["QUERY PLAN"][0]["Execution Time"] });
  });
  return steps;
}

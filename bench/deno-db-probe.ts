// Run by bench/run.ts with the function's own Deno and import map: the same
// postgres.js queries the bench times from Node, timed from inside Deno, so the
// report can tell the database's cost from the cost of postgres.js on Deno's
// node:net compatibility layer. Prints one JSON line.
//   deno run --config functions/api/deno.json --allow-net --allow-env bench/deno-db-probe.ts
import postgres from "postgres";

// The one Deno API this probe uses, declared so the Node-side typecheck (tsconfig.json) reads it too.
declare const Deno: { env: { toObject(): Record<string, string> } };

const env = Deno.env.toObject();
const sql = postgres(env.PROBE_DB_URL, { max: 1, onnotice: () => {} });
// The floor's page statement (bench/pull-throughput.ts FLOOR_PAGE_SQL) and where its pages start.
const pageSql = env.PROBE_SQL;
const listId = env.PROBE_LIST_ID;
const afterIds = JSON.parse(env.PROBE_AFTER_IDS) as string[];
const pageSize = Number(env.PROBE_PAGE_SIZE);
const samples = Number(env.PROBE_SAMPLES);

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.ceil(sorted.length / 2) - 1];
}

async function timeMedian(run: (i: number) => Promise<unknown>): Promise<number> {
  await run(0);
  const times: number[] = [];
  for (let i = 0; i < samples; i++) {
    const t0 = performance.now();
    await run(i);
    times.push(performance.now() - t0);
  }
  return median(times);
}

const roundTripMs = await timeMedian(() => sql`select 1`);
const pageMs = await timeMedian((i) => sql.unsafe(pageSql, [[listId], afterIds[i % afterIds.length], pageSize], { prepare: true }));
await sql.end();
console.log(JSON.stringify({ roundTripMs, pageMs }));

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
const userId = env.PROBE_USER_ID;
const pageSize = Number(env.PROBE_PAGE_SIZE);
const samples = Number(env.PROBE_SAMPLES);
const records = Number(env.PROBE_RECORDS);

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
const pageMs = await timeMedian(async (i) => {
  const afterSeq = Math.floor(((i + 1) * 7919) % Math.max(1, records - pageSize));
  await sql`
    select coalesce(json_agg(json_build_object('collection', p.collection, 'id', p.id, 'version', p.version, 'deleted', p.deleted, 'data', p.data,
             'updated_at', to_char(p.updated_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')) order by p.change_seq), '[]'::json)::text as changes
      from (select * from app_private.records r where r.user_id = ${userId}::uuid and r.change_seq > ${afterSeq}::bigint
             order by r.change_seq limit ${pageSize}) p`;
});
await sql.end();
console.log(JSON.stringify({ roundTripMs, pageMs }));

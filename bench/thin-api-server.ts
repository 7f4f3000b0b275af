// The thinnest HTTP API over the same database (run by Deno, started by
// bench/batch-latency.ts): for POST of a push body it parses the JSON, writes
// the ops' rows into public.tasks in one statement as the caller (the same
// INSERT as the raw-SQL floor: policies, constraints, sync triggers) and
// answers each op with the row written. No token check, no ledger, no merge,
// no validation: what any HTTP API writing these rows must at least do. The
// caller is named by `Authorization: Bearer <n>`: connection n holds the
// claims of device n (env CLAIMS, a JSON array) for its life. env COLUMNS:
// the columns the floor's INSERT writes (TASK_COLUMNS, push-throughput.ts).
//   deno run --config functions/api/deno.json --allow-net --allow-env bench/thin-api-server.ts
import postgres from "postgres";

// The Deno APIs this server uses, declared so the Node-side typecheck (tsconfig.json) reads it too.
declare const Deno: {
  env: { toObject(): Record<string, string> };
  serve(options: { port: number; hostname: string; onListen(): void }, handler: (request: Request) => Promise<Response>): unknown;
};

interface Op {
  op_id: string;
  record_id: string;
  data: Record<string, postgres.ParameterOrJSON<never>>;
}

const env = Deno.env.toObject();
const columns = JSON.parse(env.COLUMNS) as string[];
const devices = JSON.parse(env.CLAIMS) as { claims: Record<string, unknown>; deviceId: string }[];
const connections = await Promise.all(devices.map(async ({ claims, deviceId }) => {
  const sql = postgres(env.DATABASE_URL, { max: 1, onnotice: () => {} });
  await sql`select set_config('request.jwt.claims', ${JSON.stringify(claims)}, false), set_config('tidesync.device_id', ${deviceId}, false), set_config('role', 'authenticated', false)`;
  return sql;
}));

Deno.serve({ port: Number(env.PORT), hostname: "127.0.0.1", onListen() { console.log("ready"); } }, async (request) => {
  const sql = connections[Number(request.headers.get("authorization")?.slice("Bearer ".length))];
  if (!sql) return new Response("unknown device", { status: 400 });
  const { ops } = await request.json() as { ops: Op[] };
  const values: Record<string, postgres.ParameterOrJSON<never>>[] = ops.map((op) => ({ id: op.record_id, ...op.data }));
  const rows = await sql`insert into public.tasks ${sql(values, columns)} returning *`;
  const written = new Map(rows.map((row) => [row.id as string, row]));
  const results = ops.map((op) => ({ op_id: op.op_id, status: "applied", record: { collection: "tasks", id: op.record_id, data: written.get(op.record_id) } }));
  return new Response(JSON.stringify({ results }), { headers: { "content-type": "application/json" } });
});

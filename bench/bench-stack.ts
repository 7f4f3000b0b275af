// The bench's own world: a fresh database set up exactly like production (the
// stand-in, `supabase db push` as the non-superuser owner, no seed), the real
// function served by real Deno on it, and users with real sessions and tokens.
import { randomBytes, randomUUID } from "node:crypto";
import postgres from "postgres";
import { createTempDatabase, type TempDatabase } from "../scripts/lib/temp-database.ts";
import { onShutdown } from "../scripts/lib/shutdown.ts";
import { type FunctionsServer, startFunctionsServer } from "../tests/support/functions-server.ts";
import { createSigningKeys, type SigningKeys } from "../tests/support/signing-keys.ts";
import { signEs256, supabaseClaims } from "../tests/support/tokens.ts";

export interface BenchUser {
  userId: string;
  sessionId: string;
  token: string;
  /** The installation registered for the session (a push's device_id must be one of the caller's devices). */
  deviceId: string;
  /** The user's personal list (created at signup; its id is the user's id): where the bench's tasks go. */
  listId: string;
}

export interface BenchStack {
  database: TempDatabase;
  server: FunctionsServer;
  /** Superuser connection (setup only). */
  adminSql: postgres.Sql;
  /** The owner role's connection: what the raw-SQL floors and the RLS comparison use. */
  ownerSql: postgres.Sql;
  apiUrl: string;
  createUser(label: string): Promise<BenchUser>;
  /** Pids of the function's Postgres connections right now. */
  functionBackendPids(): Promise<number[]>;
  stop(): Promise<void>;
}

const GENEROUS = { limit: 10_000_000, window_seconds: 60 };

export async function startBenchStack(log: (line: string) => void): Promise<BenchStack> {
  log("bench: creating a fresh database (stand-in + supabase db push as the owner role)…");
  const database = await createTempDatabase("tidesync_bench", { seed: false });
  const keys: SigningKeys = await createSigningKeys();
  log(`bench: database ${database.name} ready; starting the api function on real Deno…`);
  const server = await startFunctionsServer({
    SUPABASE_DB_URL: database.ownerDbUrl,
    SUPABASE_JWKS: JSON.stringify(keys.publicJwks),
    TIDESYNC_CURSOR_SECRET: randomBytes(32).toString("base64url"),
    TIDESYNC_RATE_LIMITS: JSON.stringify({
      "auth.session": GENEROUS,
      "devices": GENEROUS,
      "notifications": GENEROUS,
      // A sync budget's default ceiling on the user's total is below GENEROUS: raised too.
      "sync.pull": { ...GENEROUS, user_limit: GENEROUS.limit },
      "sync.batch": { ...GENEROUS, user_limit: GENEROUS.limit },
      "account.deletion": GENEROUS,
      "account.export": GENEROUS,
    }),
    // Memory experiments (docs/performance-history.md), e.g. BENCH_DENO_V8_FLAGS=--memory-saver-mode. A flag
    // the server sets on its command line (scripts/lib/deno.ts) wins over the same flag here.
    ...(process.env.BENCH_DENO_V8_FLAGS ? { DENO_V8_FLAGS: process.env.BENCH_DENO_V8_FLAGS } : {}),
  }, { name: database.name });
  const stopServer = onShutdown(() => server.stop());
  const adminSql = postgres(database.adminDbUrl, { max: 2, onnotice: () => {} });
  const ownerSql = postgres(database.ownerDbUrl, { max: 4, onnotice: () => {} });

  async function createUser(label: string): Promise<BenchUser> {
    const userId = randomUUID();
    const sessionId = randomUUID();
    const email = `bench-${label}-${userId.slice(0, 8)}@bench.tidesync.dev`;
    await adminSql`
      insert into auth.users (instance_id, id, aud, role, email, raw_app_meta_data, raw_user_meta_data, created_at, updated_at, is_anonymous)
      values ('00000000-0000-0000-0000-000000000000', ${userId}, 'authenticated', 'authenticated', ${email},
              ${adminSql.json({ provider: "email", providers: ["email"] })}, ${adminSql.json({})}, now(), now(), false)`;
    await adminSql`
      insert into auth.sessions (id, user_id, aal, created_at, updated_at, user_agent)
      values (${sessionId}, ${userId}, 'aal1', now(), now(), 'tidesync bench')`;
    const deviceId = randomUUID();
    await adminSql`
      insert into app_private.devices (user_id, installation_id, platform, app_version, build_number, session_id)
      values (${userId}, ${deviceId}, 'ios', '1.0.0', 1, ${sessionId})`;
    const token = await signEs256(keys.privateJwk, supabaseClaims({ userId, sessionId, email, expiresInSeconds: 6 * 3600 }));
    return { userId, sessionId, token, deviceId, listId: userId };
  }

  return {
    database,
    server,
    adminSql,
    ownerSql,
    apiUrl: server.apiUrl,
    createUser,
    async functionBackendPids() {
      const rows = await adminSql<{ pid: number }[]>`
        select pid from pg_stat_activity where datname = ${database.name} and application_name = 'tidesync-api'`;
      return rows.map((r) => r.pid);
    },
    async stop() {
      await ownerSql.end({ timeout: 5 });
      await adminSql.end({ timeout: 5 });
      await stopServer();
      await database.drop();
    },
  };
}

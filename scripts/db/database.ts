// Brings a Postgres database to tidesync's current schema, the same way on a
// real Supabase database and on a plain one:
//   1. plain Postgres only: the Supabase platform stand-in (supabase-standin.sql);
//   2. every migration through the real Supabase CLI (`supabase db push`);
//   3. optionally the sample seed (supabase/seed.sql, built from fixtures/),
//      only into a database whose schema this setup created: applied again, it
//      would add back the sample rows and memberships deleted since.
import { readFile } from "node:fs/promises";
import path from "node:path";
import postgres from "postgres";
import { bin, ROOT } from "../lib/paths.ts";
import { runOrThrow } from "../lib/run.ts";

/** Stands in for hosted Supabase's `postgres` role, which is not a superuser. */
export const OWNER_ROLE = "tidesync_owner";
const STANDIN_MARKER = "tidesync stand-in for the Supabase Auth schema";

const quiet = { onnotice: () => {}, max: 1, connect_timeout: 10 } as const;

export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = "/" + database;
  return u.toString();
}

/** The same URL for another role; the password stays (see provisionDatabase). */
export function withUser(url: string, user: string): string {
  const u = new URL(url);
  u.username = user;
  return u.toString();
}

function assertDatabaseName(name: string): void {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(name)) throw new Error(`refusing unusual database name ${JSON.stringify(name)}`);
}

export type DatabaseKind = "supabase" | "standin" | "plain";

export async function databaseKind(url: string): Promise<DatabaseKind> {
  const sql = postgres(url, quiet);
  try {
    const [row] = await sql<{ users: string | null; marker: string | null }[]>`
      select to_regclass('auth.users')::text as users,
             obj_description(to_regnamespace('auth')::oid, 'pg_namespace') as marker`;
    if (!row.users) return "plain";
    return row.marker === STANDIN_MARKER ? "standin" : "supabase";
  } finally {
    await sql.end();
  }
}

/** Whether a stand-in has everything later versions of it added (realtime, auth.identities, auth.mfa_factors, RLS on auth.users). */
async function standinIsCurrent(url: string): Promise<boolean> {
  const sql = postgres(url, quiet);
  try {
    const [row] = await sql<{ messages: string | null; identities: string | null; factors: string | null; users_rls: boolean }[]>`
      select to_regclass('realtime.messages')::text as messages, to_regclass('auth.identities')::text as identities,
             to_regclass('auth.mfa_factors')::text as factors,
             (select relrowsecurity from pg_class where oid = 'auth.users'::regclass) as users_rls`;
    return row.messages !== null && row.identities !== null && row.factors !== null && row.users_rls;
  } finally {
    await sql.end();
  }
}

/** Applies the stand-in (as a superuser) so that `migrationRole` plays hosted `postgres`. */
export async function applyStandin(superuserUrl: string, migrationRole: string): Promise<void> {
  const text = await readFile(path.join(ROOT, "scripts/db/supabase-standin.sql"), "utf8");
  const sql = postgres(superuserUrl, quiet);
  try {
    const [me] = await sql<{ rolsuper: boolean }[]>`select rolsuper from pg_roles where rolname = current_user`;
    if (!me?.rolsuper) {
      throw new Error("This database has no Supabase auth schema, and applying the stand-in needs a superuser connection. " +
        "Use a superuser DATABASE_URL, or point at a real Supabase database.");
    }
    // Roles live in cluster-wide catalogs: two databases set up at once can
    // collide there ("tuple concurrently updated"). The transaction is
    // idempotent, so it is simply tried again.
    for (let attempt = 1; ; attempt++) {
      try {
        await sql.begin(async (tx) => {
          await tx`select set_config('tidesync.migration_role', ${migrationRole}, true)`;
          await tx.unsafe(text);
          await tx.unsafe(`comment on schema auth is '${STANDIN_MARKER}'`);
        });
        break;
      } catch (error) {
        const concurrent = /tuple concurrently (updated|deleted)/.test(String((error as Error).message));
        if (!concurrent || attempt >= 5) throw error;
        await new Promise((resolve) => setTimeout(resolve, 100 * attempt));
      }
    }
  } finally {
    await sql.end();
  }
}

/** Applies pending migrations with the real CLI, as the role in `url` (from `workdir`/supabase/migrations). */
export async function pushMigrations(url: string, workdir = ROOT): Promise<string> {
  const result = await runOrThrow(bin("supabase"), ["db", "push", `--remote=${url}`, "--yes", "--workdir", workdir], {
    cwd: ROOT,
    env: { ...process.env, SUPABASE_YES: "1", DO_NOT_TRACK: "1", SUPABASE_TELEMETRY_DISABLED: "1" },
    timeoutMs: 180_000,
  });
  return result.stdout + result.stderr;
}

export async function applySeed(url: string): Promise<void> {
  const text = await readFile(path.join(ROOT, "supabase/seed.sql"), "utf8");
  const sql = postgres(url, quiet);
  try {
    await sql.begin((tx) => tx.unsafe(text));
  } finally {
    await sql.end();
  }
}

/** How many migrations the Supabase CLI has recorded as applied (0: the schema is not there yet). */
async function appliedMigrations(url: string): Promise<number> {
  const sql = postgres(url, quiet);
  try {
    const [table] = await sql<{ name: string | null }[]>`select to_regclass('supabase_migrations.schema_migrations')::text as name`;
    if (!table.name) return 0;
    const [row] = await sql<{ n: number }[]>`select count(*)::int as n from supabase_migrations.schema_migrations`;
    return row.n;
  } finally {
    await sql.end();
  }
}

export interface SetupOptions {
  /** Connection used for the stand-in (needs a superuser when the stand-in is applied). */
  adminUrl: string;
  /** Connection migrations and seed run as (defaults to adminUrl). */
  migrationUrl?: string;
  /** Load the sample seed when this setup creates the schema (never into a database that already had it). */
  seed: boolean;
  log?: (line: string) => void;
}

export interface SetupResult {
  kind: Exclude<DatabaseKind, "plain">;
  /** Whether the sample seed was loaded by this setup. */
  seeded: boolean;
}

export async function setupDatabase(options: SetupOptions): Promise<SetupResult> {
  const log = options.log ?? (() => {});
  const migrationUrl = options.migrationUrl ?? options.adminUrl;
  const kind = await databaseKind(options.adminUrl);
  const role = decodeURIComponent(new URL(migrationUrl).username) || "postgres";
  if (kind === "plain") {
    log(`no Supabase auth schema found: applying the Supabase platform stand-in (migration role ${role})`);
    await applyStandin(options.adminUrl, role);
  } else if (kind === "standin" && !(await standinIsCurrent(options.adminUrl))) {
    // A stand-in from before it had the realtime schema, auth.identities, auth.mfa_factors or RLS on the auth tables: apply it again (it is idempotent).
    log(`stand-in from an earlier version: applying the stand-in again (migration role ${role})`);
    await applyStandin(options.adminUrl, role);
  } else {
    log(kind === "supabase" ? "Supabase database detected: stand-in not needed" : "stand-in already applied");
  }
  const fresh = (await appliedMigrations(migrationUrl)) === 0;
  log("applying migrations with the Supabase CLI (supabase db push)");
  await pushMigrations(migrationUrl);
  const seeded = options.seed && fresh;
  if (seeded) {
    log("loading the sample seed (supabase/seed.sql): the schema is new");
    await applySeed(migrationUrl);
  } else if (options.seed) {
    log("sample seed not loaded: the database already had the schema, and its data stays as it is");
  }
  return { kind: kind === "plain" ? "standin" : kind, seeded };
}

/**
 * Creates (or recreates) a database owned by OWNER_ROLE, a non-superuser with
 * hosted `postgres`' attributes, and returns its owner's URL.
 */
export async function provisionDatabase(superuserUrl: string, database: string, options: { recreate: boolean }): Promise<string> {
  assertDatabaseName(database);
  const sql = postgres(withDatabase(superuserUrl, "postgres"), quiet);
  try {
    await sql.unsafe(`
      do $$ begin
        create role ${OWNER_ROLE} login nosuperuser createrole createdb bypassrls;
      exception when duplicate_object or unique_violation then null;
      end $$`);
    // Where the server wants passwords (a freshly installed cluster, as .ci/run
    // may make), the owner logs in with the superuser's password: dev/CI only.
    const password = decodeURIComponent(new URL(superuserUrl).password);
    if (password) await sql.unsafe(`alter role ${OWNER_ROLE} password '${password.replaceAll("'", "''")}'`);
    const [exists] = await sql`select 1 from pg_database where datname = ${database}`;
    if (exists && options.recreate) await sql.unsafe(`drop database "${database}" with (force)`);
    if (!exists || options.recreate) await sql.unsafe(`create database "${database}" owner ${OWNER_ROLE}`);
  } finally {
    await sql.end();
  }
  return withUser(withDatabase(superuserUrl, database), OWNER_ROLE);
}

export async function dropDatabase(superuserUrl: string, database: string): Promise<void> {
  assertDatabaseName(database);
  const sql = postgres(withDatabase(superuserUrl, "postgres"), quiet);
  try {
    await sql.unsafe(`drop database if exists "${database}" with (force)`);
  } finally {
    await sql.end();
  }
}

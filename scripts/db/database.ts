// Brings a Postgres database to tidesync's current schema, the same way on a
// real Supabase database and on a plain one:
//   1. plain Postgres only: the Supabase platform stand-in (supabase-standin.sql);
//   2. every migration through the real Supabase CLI (`supabase db push`);
//   3. the sample seed (supabase/seed.sql, built from fixtures/), by default
//      only into a new stand-in database whose auth.users is empty
//      (decideSeed): applied again it would add back the sample rows and
//      memberships deleted since, and into a database with real users it would
//      add users with a public password and an everyone-group of sample builds.
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

/** How many rows auth.users holds (null: this role may not count them). */
async function authUserCount(url: string): Promise<number | null> {
  const sql = postgres(url, quiet);
  try {
    const [row] = await sql<{ n: number }[]>`select count(*)::int as n from auth.users`;
    return row.n;
  } catch {
    return null;
  } finally {
    await sql.end();
  }
}

/**
 * `if-new` (the default): only into a stand-in database whose schema this setup
 * creates and whose auth.users is empty; `always` (`--seed`): whatever the
 * database holds; `never` (`--no-seed`).
 */
export type SeedChoice = "if-new" | "always" | "never";

export interface SeedFacts {
  kind: Exclude<DatabaseKind, "plain">;
  /** No migration recorded before this setup: the schema is new. */
  fresh: boolean;
  /** Rows in auth.users before the seed (null: could not be counted). */
  authUsers: number | null;
}

/** Whether to load the sample seed, and what to say about it. */
export function decideSeed(choice: SeedChoice, facts: SeedFacts): { seed: boolean; message?: string } {
  if (choice === "never") return { seed: false };
  if (choice === "always") return { seed: true, message: "loading the sample seed (supabase/seed.sql): asked for with --seed" };
  const notLoaded = "sample seed not loaded: ";
  const ask = " Load it anyway with --seed.";
  if (facts.kind === "supabase") {
    return { seed: false, message: notLoaded + "this is a real Supabase database, and the sample (users alice@/bob@sample.tidesync.dev with a " +
      "published password, an \"Everyone (sample)\" tester group and sample builds) would reach its real users." + ask };
  }
  if (!facts.fresh) return { seed: false, message: notLoaded + "the database already had the schema, and its data stays as it is." + ask };
  if (facts.authUsers === null || facts.authUsers > 0) {
    return { seed: false, message: notLoaded + (facts.authUsers === null ? "auth.users could not be counted" : `auth.users already has ${facts.authUsers} user${facts.authUsers === 1 ? "" : "s"}`) +
      ", so these are not sample users of a new database (the sample would add users with a published password and make every user a member of a sample tester group)." + ask };
  }
  return { seed: true, message: "loading the sample seed (supabase/seed.sql): the schema is new and auth.users is empty" };
}

export interface SetupOptions {
  /** Connection used for the stand-in (needs a superuser when the stand-in is applied). */
  adminUrl: string;
  /** Connection migrations and seed run as (defaults to adminUrl). */
  migrationUrl?: string;
  seed: SeedChoice;
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
  const plainKind = await databaseKind(options.adminUrl);
  const kind = plainKind === "plain" ? "standin" : plainKind;
  const role = decodeURIComponent(new URL(migrationUrl).username) || "postgres";
  if (plainKind === "plain") {
    log(`no Supabase auth schema found: applying the Supabase platform stand-in (migration role ${role})`);
    await applyStandin(options.adminUrl, role);
  } else if (kind === "standin" && !(await standinIsCurrent(options.adminUrl))) {
    // A stand-in from before it had the realtime schema, auth.identities, auth.mfa_factors or RLS on the auth tables: apply it again (it is idempotent).
    log(`stand-in from an earlier version: applying the stand-in again (migration role ${role})`);
    await applyStandin(options.adminUrl, role);
  } else {
    log(kind === "supabase" ? "Supabase database detected: stand-in not needed" : "stand-in already applied");
  }
  // Counted before anything runs: after a rollback of every migration, auth.users (Supabase Auth's) keeps its users.
  const facts: SeedFacts = { kind, fresh: (await appliedMigrations(migrationUrl)) === 0, authUsers: await authUserCount(options.adminUrl) };
  log("applying migrations with the Supabase CLI (supabase db push)");
  await pushMigrations(migrationUrl);
  const decision = decideSeed(options.seed, facts);
  if (decision.message) log(decision.message);
  if (decision.seed) await applySeed(migrationUrl);
  return { kind, seeded: decision.seed };
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

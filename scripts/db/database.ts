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

/**
 * A connection string from the environment (DATABASE_URL, DATABASE_OWNER_URL), empty counting as
 * unset as in .env.example; one that is no postgres:// URL stops the script naming the variable.
 */
export function databaseUrlSetting(name: string): string | undefined {
  const value = process.env[name] || undefined;
  if (value === undefined) return undefined;
  let protocol: string;
  try {
    protocol = new URL(value).protocol;
  } catch {
    throw new Error(`${name} is not a valid URL: expected postgres://user[:password]@host:port/database`);
  }
  if (protocol !== "postgres:" && protocol !== "postgresql:") throw new Error(`${name} must be a postgres:// URL, not ${protocol}//`);
  return value;
}

/**
 * DATABASE_URL (required) and DATABASE_OWNER_URL of a db: script (`script` names it in the
 * message); one missing or malformed ends the process with status 2, saying which.
 */
export function scriptDatabaseUrls(script: string): { url: string; ownerUrl: string | undefined } {
  try {
    const url = databaseUrlSetting("DATABASE_URL");
    if (!url) throw new Error(`DATABASE_URL is required, e.g. DATABASE_URL=postgres://postgres@127.0.0.1:5432/tidesync npm run ${script}`);
    return { url, ownerUrl: databaseUrlSetting("DATABASE_OWNER_URL") };
  } catch (error) {
    console.error(`${script}: ${(error as Error).message}`);
    process.exit(2);
  }
}

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

/**
 * Whether a stand-in has everything later versions of it added (realtime, auth.identities, auth.mfa_factors,
 * RLS on auth.users, the policy_grants event triggers that replaced the migration role's membership of
 * supabase_realtime_admin, Storage's guard against direct deletes, supabase_auth_admin's search_path and
 * no CREATEROLE, supautils' allowed settings).
 */
async function standinIsCurrent(url: string): Promise<boolean> {
  const sql = postgres(url, quiet);
  try {
    const [row] = await sql<{ messages: string | null; identities: string | null; factors: string | null; users_rls: boolean; policy_grants: boolean;
      supautils_settings: boolean; storage_guard: boolean; auth_admin: boolean }[]>`
      select to_regclass('realtime.messages')::text as messages, to_regclass('auth.identities')::text as identities,
             to_regclass('auth.mfa_factors')::text as factors,
             (select relrowsecurity from pg_class where oid = 'auth.users'::regclass) as users_rls,
             exists (select 1 from pg_event_trigger where evtname = 'standin_policy_grants_lend') as policy_grants,
             exists (select 1 from pg_parameter_acl where parname = 'session_replication_role') as supautils_settings,
             (select count(*) = 2 from pg_trigger where tgname in ('protect_objects_delete', 'protect_buckets_delete')
                and tgrelid in (to_regclass('storage.objects'), to_regclass('storage.buckets'))) as storage_guard,
             exists (select 1 from pg_roles r join pg_db_role_setting s on s.setrole = r.oid and s.setdatabase = 0
                      where r.rolname = 'supabase_auth_admin' and not r.rolcreaterole and 'search_path=auth' = any (s.setconfig)) as auth_admin`;
    return row.messages !== null && row.identities !== null && row.factors !== null && row.users_rls && row.policy_grants &&
      row.supautils_settings && row.storage_guard && row.auth_admin;
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

function roleOf(url: string): string {
  return decodeURIComponent(new URL(url).username) || "postgres";
}

/**
 * The connection migrations, the seed and the function run as: never a superuser, since hosted
 * Supabase's `postgres` is not one (a superuser owning app_private would run every SECURITY DEFINER
 * function as a superuser, and a privilege a migration lacks on Supabase would pass unnoticed here).
 * `ownerUrl` (DATABASE_OWNER_URL) when given; else `adminUrl` when it is no superuser's; else, with a
 * superuser's `adminUrl`, the role that owns app_private, or the database's owner when the schema is
 * new; a plain database owned by a superuser is given to OWNER_ROLE first. Refuses what would run as
 * a superuser.
 */
async function migrationConnection(adminUrl: string, ownerUrl: string | undefined, kind: DatabaseKind,
  log: (line: string) => void): Promise<{ url: string; reapplyStandin: boolean }> {
  const startOver = "Start it over with `npm run db:reset` (it recreates the database and hands it to a non-superuser owner).";
  if (ownerUrl) {
    const sql = postgres(ownerUrl, quiet);
    try {
      const [me] = await sql<{ rolsuper: boolean }[]>`select rolsuper from pg_roles where rolname = current_user`;
      if (me.rolsuper) throw new Error(`DATABASE_OWNER_URL connects as the superuser ${roleOf(ownerUrl)}: migrations must not run as a superuser (hosted Supabase's postgres is not one).`);
    } finally {
      await sql.end();
    }
    return { url: ownerUrl, reapplyStandin: false };
  }
  const sql = postgres(adminUrl, quiet);
  try {
    const [row] = await sql<{ me: string; me_super: boolean; database: string; owner: string; owner_super: boolean; schema_owner: string | null; schema_owner_super: boolean | null }[]>`
      select current_user as me, (select rolsuper from pg_roles where rolname = current_user) as me_super, d.datname as database,
             o.rolname as owner, o.rolsuper as owner_super, s.rolname as schema_owner, s.rolsuper as schema_owner_super
        from pg_database d join pg_roles o on o.oid = d.datdba
        left join pg_namespace n on n.nspname = 'app_private' left join pg_roles s on s.oid = n.nspowner
       where d.datname = current_database()`;
    if (!row.me_super) return { url: adminUrl, reapplyStandin: false };
    if (row.schema_owner !== null) {
      if (row.schema_owner_super) {
        throw new Error(`the schema in ${row.database} was applied by the superuser ${row.schema_owner} (app_private belongs to it), so its ` +
          "SECURITY DEFINER functions run as a superuser, which hosted Supabase never does. " + startOver);
      }
      log(`DATABASE_URL connects as the superuser ${row.me}: the migrations, the seed and the function run as ${row.schema_owner}, app_private's owner`);
      return { url: withUser(adminUrl, row.schema_owner), reapplyStandin: false };
    }
    if (!row.owner_super) {
      log(`DATABASE_URL connects as the superuser ${row.me}: the migrations, the seed and the function run as ${row.owner}, the database's owner`);
      return { url: withUser(adminUrl, row.owner), reapplyStandin: false };
    }
    if (kind === "supabase") {
      throw new Error(`${row.database} belongs to the superuser ${row.owner} and DATABASE_URL connects as the superuser ${row.me}: ` +
        "on Supabase the migrations run as postgres, which is not a superuser. Connect as postgres (DATABASE_URL=postgres://postgres:…), or set DATABASE_OWNER_URL.");
    }
    // A new plain or stand-in database a superuser made (createdb): hand it to OWNER_ROLE, as hosted Supabase's database is postgres'.
    await ensureOwnerRole(sql, adminUrl);
    await sql.unsafe(`alter database "${row.database.replaceAll('"', '""')}" owner to ${OWNER_ROLE}`);
    log(`WARNING: ${row.database} belonged to the superuser ${row.owner}; its owner is now ${OWNER_ROLE} (not a superuser, like hosted ` +
      `Supabase's postgres), which runs the migrations, the seed and the function. Migrations never run as a superuser.`);
    return { url: withUser(adminUrl, OWNER_ROLE), reapplyStandin: kind === "standin" };
  } finally {
    await sql.end();
  }
}

/** Tables, views and sequences outside Postgres' own schemas and not an extension's, by name (the first few). */
export async function ownRelations(url: string): Promise<string[]> {
  const sql = postgres(url, quiet);
  try {
    const rows = await sql<{ name: string }[]>`
      select format('%I.%I', n.nspname, c.relname) as name
      from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where c.relkind in ('r', 'p', 'v', 'm', 'S', 'f')
        and n.nspname <> 'information_schema' and n.nspname !~ '^pg_'
        -- an extension's own (pg_buffercache's view, PostGIS' spatial_ref_sys), as template1 may carry them
        and not exists (select 1 from pg_depend d where d.classid = 'pg_class'::regclass and d.objid = c.oid and d.deptype = 'e')
      order by 1 limit 4`;
    return rows.map((r) => r.name);
  } finally {
    await sql.end();
  }
}

/** "a table of its own (public.customers)", for a refusal. */
export function describeRelations(own: string[]): string {
  return `${own.length === 1 ? "a table" : "tables"} of its own (${own.slice(0, 3).join(", ")}${own.length > 3 ? ", …" : ""})`;
}

export interface SetupOptions {
  /** Connection used for the stand-in (needs a superuser when the stand-in is applied). */
  adminUrl: string;
  /** Connection migrations and seed run as (DATABASE_OWNER_URL); by default chosen by migrationConnection. */
  migrationUrl?: string;
  seed: SeedChoice;
  log?: (line: string) => void;
}

export interface SetupResult {
  kind: Exclude<DatabaseKind, "plain">;
  /** Whether the sample seed was loaded by this setup. */
  seeded: boolean;
  /** The connection migrations and seed ran as (never a superuser's): the function's too. */
  migrationUrl: string;
}

export async function setupDatabase(options: SetupOptions): Promise<SetupResult> {
  const log = options.log ?? (() => {});
  const plainKind = await databaseKind(options.adminUrl);
  if (plainKind === "plain") {
    // Someone's app database pointed at by mistake: the stand-in would add Supabase's roles and auth
    // schema to it, and the sample users (whose password README publishes), and take its ownership.
    const own = await ownRelations(options.adminUrl);
    if (own.length > 0) {
      throw new Error(`${new URL(options.adminUrl).pathname.slice(1)} is neither a Supabase nor a tidesync stand-in database, and holds ${describeRelations(own)}: ` +
        "tidesync's local set-up adds the Supabase stand-in (roles, the auth schema, sample users) to the database it is given. " +
        "Give it a database of its own (createdb tidesync), or a Supabase one.");
    }
  }
  const kind = plainKind === "plain" ? "standin" : plainKind;
  const { url: migrationUrl, reapplyStandin } = await migrationConnection(options.adminUrl, options.migrationUrl, plainKind, log);
  const role = roleOf(migrationUrl);
  if (plainKind === "plain") {
    log(`no Supabase auth schema found: applying the Supabase platform stand-in (migration role ${role})`);
    await applyStandin(options.adminUrl, role);
  } else if (reapplyStandin) {
    log(`applying the stand-in again for the migration role ${role}`);
    await applyStandin(options.adminUrl, role);
  } else if (kind === "standin" && !(await standinIsCurrent(options.adminUrl))) {
    // A stand-in from before one of the additions standinIsCurrent lists: apply it again (it is idempotent).
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
  return { kind, seeded: decision.seed, migrationUrl };
}

/** OWNER_ROLE, with hosted `postgres`' attributes (not a superuser), on the cluster of `sql` (a superuser connection). */
async function ensureOwnerRole(sql: postgres.Sql, superuserUrl: string): Promise<void> {
  await sql.unsafe(`
    do $$ begin
      create role ${OWNER_ROLE} login nosuperuser createrole createdb bypassrls;
    exception when duplicate_object or unique_violation then null;
    end $$`);
  // Where the server wants passwords (a freshly installed cluster, as .ci/run
  // may make), the owner logs in with the superuser's password: dev/CI only.
  const password = decodeURIComponent(new URL(superuserUrl).password);
  if (password) await sql.unsafe(`alter role ${OWNER_ROLE} password '${password.replaceAll("'", "''")}'`);
}

/**
 * Creates (or recreates) a database owned by OWNER_ROLE, a non-superuser with
 * hosted `postgres`' attributes, and returns its owner's URL.
 */
export async function provisionDatabase(superuserUrl: string, database: string, options: { recreate: boolean }): Promise<string> {
  assertDatabaseName(database);
  const sql = postgres(withDatabase(superuserUrl, "postgres"), quiet);
  try {
    await ensureOwnerRole(sql, superuserUrl);
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

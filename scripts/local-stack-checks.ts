// Checks of the local-stack scripts as a developer runs them (processes, exit
// statuses, what they print, what they leave in a database). Run by
// `npm run test:migrations`, which has the Postgres they need, or alone:
// `npx tsx scripts/local-stack-checks.ts`.
import { randomBytes } from "node:crypto";
import net from "node:net";
import { Webhook } from "standardwebhooks";
import { requestLine } from "../functions/_shared/releases/webhook-signature.ts";
import { freePort } from "../tests/support/functions-server.ts";
import path from "node:path";
import { PassThrough } from "node:stream";
import { DENO, denoEnv, denoServeArgs, functionConfigArgs } from "./lib/deno.ts";
import { startFunctionsProcess } from "./lib/functions-process.ts";
import { bin, ROOT } from "./lib/paths.ts";
import { run } from "./lib/run.ts";
import { spawn } from "node:child_process";
import postgres from "postgres";
import { applyStandin, dropDatabase, OWNER_ROLE, provisionDatabase, withDatabase } from "./db/database.ts";
import { insertAuthUser } from "../tests/support/auth-users.ts";
import { TEST_ADMIN_URL, temporaryDatabaseName } from "./lib/temp-database.ts";

export type Report = (ok: boolean, name: string, detail?: string) => boolean;

/** A function whose configuration is refused ends with status 1 and the message, from either entry point. */
async function refusedConfigurationExits(report: Report): Promise<void> {
  const env = denoEnv({
    SUPABASE_DB_URL: "postgres://nobody@127.0.0.1:1/none",
    SUPABASE_JWT_SECRET: "s".repeat(32),
    TIDESYNC_CURSOR_SECRET: "c".repeat(32),
    TIDESYNC_DB_STATEMENT_TIMEOUT_MS: "3000000000",
    TIDESYNC_PORT: "1", // never reached: the configuration is read first
  });
  const entryPoints: [string, string[]][] = [
    ["scripts/serve-functions.ts (npm start, tests)", denoServeArgs()],
    ["functions/api/index.ts (deployed)", ["run", ...functionConfigArgs(), "--allow-net", "--allow-env", "--allow-read", path.join(ROOT, "functions/api/index.ts")]],
  ];
  for (const [name, args] of entryPoints) {
    const result = await run(DENO, args, { cwd: ROOT, env, timeoutMs: 60_000 });
    const said = /"level":"fatal".*TIDESYNC_DB_STATEMENT_TIMEOUT_MS must be a whole number/.test(result.stderr);
    report(result.code === 1 && said && !/kept serving/.test(result.stderr),
      `${name} with a refused setting ends with status 1 and says which`,
      `status ${result.code}\n${result.stderr.slice(0, 600)}`);
  }
}

/** A DATABASE_URL that is no postgres:// URL stops npm start and db:setup with its name (it said "Invalid URL"). */
async function malformedDatabaseUrlIsNamed(report: Report): Promise<void> {
  for (const script of ["start", "db:setup"]) {
    const result = await npmRun(script, "not a url");
    report(result.code !== 0 && result.stderr.includes("DATABASE_URL is not a valid URL"),
      `npm ${script === "start" ? "start" : `run ${script}`} with a DATABASE_URL that is no URL stops and names it`, `status ${result.code}\n${result.stdout}${result.stderr}`);
  }
}

/** A server on a free port of 127.0.0.1, standing for another stack already there. */
async function occupyPort(): Promise<{ port: number; close(): Promise<void> }> {
  const server = net.createServer((socket) => socket.end("HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}"));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { port: (server.address() as net.AddressInfo).port, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/**
 * `npm start` on a TIDESYNC_PORT another server holds stops at once, naming the variable. Before, its
 * readiness probe took the other server's answers for its own: "tidesync is up" with that stack's URL
 * and tokens of its own key, then Deno died with AddrInUse.
 */
async function portInUseIsRefused(report: Report): Promise<void> {
  const other = await occupyPort();
  try {
    const result = await run(bin("tsx"), ["scripts/start.ts"], {
      cwd: ROOT,
      // A database nobody serves: the port must be refused before it is tried.
      env: { ...process.env, TIDESYNC_PORT: String(other.port), DATABASE_URL: "postgres://nobody@127.0.0.1:1/none" },
      timeoutMs: 60_000,
    });
    const output = result.stdout + result.stderr;
    report(result.code === 1 && output.includes(`port ${other.port} on 127.0.0.1 is in use`) && output.includes("TIDESYNC_PORT") &&
      !/tidesync is up|using DATABASE_URL/.test(output),
      "npm start with TIDESYNC_PORT in use stops before anything else, naming the variable", `status ${result.code}\n${output.slice(-800)}`);

    const refused = await startFunctionsProcess({ env: {}, port: other.port, output: new PassThrough() }).then(
      async (server) => {
        await server.stop();
        return "it started";
      },
      (error: Error) => error.message,
    );
    report(/is in use.*TIDESYNC_PORT/.test(refused), "the functions server is not started on a port in use (its probe would take the other server for it)", refused);
  } finally {
    await other.close();
  }
}

function npmRun(script: string, databaseUrl: string, args: string[] = []): ReturnType<typeof run> {
  return run("npm", ["run", "-s", script, ...(args.length ? ["--", ...args] : [])], { cwd: ROOT, env: { ...process.env, DATABASE_URL: databaseUrl }, timeoutMs: 240_000 });
}

/**
 * db:reset and db:setup on a plain database that is someone's (not a stand-in) refuse and leave it as
 * it was: db:reset dropped it before; db:setup took its ownership and added the stand-in and the
 * sample users to it. An extension's relations are not the database's own (they were counted).
 */
async function setupAndResetRefuseOtherDatabases(report: Report): Promise<void> {
  const expected: Record<string, string> = { "db:reset": "is not a tidesync stand-in database", "db:setup": "is neither a Supabase nor a tidesync stand-in database" };
  for (const [script, refusal] of Object.entries(expected)) {
    const name = temporaryDatabaseName("tidesync_not_ours");
    const check = `${script} refuses a plain database with tables of its own and leaves them`;
    const admin = postgres(TEST_ADMIN_URL, { max: 1, onnotice: () => {} });
    try {
      await admin.unsafe(`create database ${name}`);
      const db = postgres(withDatabase(TEST_ADMIN_URL, name), { max: 1, onnotice: () => {} });
      try {
        // An extension's view (as template1 may carry) is not the database's own: only customers is named.
        await db.unsafe("create extension pg_buffercache; create table customers (id int primary key, name text); insert into customers values (1, 'precious')");
        const result = await npmRun(script, withDatabase(TEST_ADMIN_URL, name));
        const [row] = await db<{ n: number; auth: boolean; owner: string }[]>`
          select (select count(*)::int from customers) as n, exists (select 1 from pg_namespace where nspname = 'auth') as auth,
                 (select pg_get_userbyid(datdba) from pg_database where datname = current_database()) as owner`;
        report(result.code === 1 && result.stderr.includes(`${name} ${refusal}`) && result.stderr.includes("public.customers") &&
          !result.stderr.includes("pg_buffercache") && row.n === 1 && !row.auth && row.owner !== "tidesync_owner", check, `status ${result.code}\n${result.stdout}${result.stderr}\n${JSON.stringify(row)}`);
      } finally {
        await db.end();
      }
    } catch (error) {
      report(false, check, (error as Error).message);
    } finally {
      await admin.end();
      await dropDatabase(TEST_ADMIN_URL, name);
    }
  }
}

// The sample (fixtures/): Alice's task "Oat milk" in her "Groceries (sample)", shared with Bob.
const ALICE = { sub: "00000000-0000-4000-8000-00000000a11c", role: "authenticated", session_id: "00000000-0000-4000-8000-0000000005a1" };
const BOB = "00000000-0000-4000-8000-000000000b0b";
const OAT_MILK = "00000000-0000-4000-8000-0000000a2001";
const GROCERIES = "00000000-0000-4000-8000-0000000a1001";
const SAMPLE_RELEASE = "00000000-0000-4000-8000-000000007001"; // fixtures/sample-releases.json: iOS production 140

/** `npm start` on `databaseUrl` until it is up (or ends); its output, and how to stop it. */
async function npmStartUntilUp(env: NodeJS.ProcessEnv): Promise<{ output: string; up: boolean; stop(): Promise<void> }> {
  const child = spawn("npm", ["start"], { cwd: ROOT, detached: true, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...env } });
  let output = "";
  child.stdout.on("data", (d) => (output += d));
  child.stderr.on("data", (d) => (output += d));
  const up = await new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), 180_000);
    child.stdout.on("data", () => /Ctrl-C stops everything/.test(output) && (clearTimeout(timer), resolve(true)));
    child.once("exit", () => (clearTimeout(timer), resolve(false)));
  });
  return {
    output,
    up,
    async stop() {
      if (child.exitCode !== null || child.pid === undefined) return;
      const exited = new Promise((resolve) => child.once("exit", resolve));
      process.kill(-child.pid, "SIGTERM"); // its own process group: npm, tsx and Deno
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 10_000))]);
    },
  };
}

/** A CI read (GET a sample release's feedback) signed with `secret` as docs/test-builds.md says: its status. */
async function signedFeedbackRead(api: string, secret: string): Promise<number> {
  const target = `/v1/releases/${SAMPLE_RELEASE}/feedback`;
  const id = `msg_${crypto.randomUUID()}`;
  const now = new Date();
  const response = await fetch(api.replace(/\/v1$/, "") + target, {
    headers: {
      "webhook-id": id,
      "webhook-timestamp": String(Math.floor(now.getTime() / 1000)),
      "webhook-signature": new Webhook(secret).sign(id, now, requestLine("GET", target)),
    },
  });
  await response.body?.cancel();
  return response.status;
}

/**
 * A second db:setup or npm start keeps the data as it is. Both applied the seed again (on conflict do
 * nothing): a sample task the user deleted came back (devices pulled it again), and Bob, removed from
 * Alice's list by her, was a member again. The seed is now loaded only when the schema is new; npm start
 * says which sample users it can no longer print a working token for.
 */
async function setupKeepsTheData(report: Report): Promise<void> {
  const name = temporaryDatabaseName("tidesync_reseed");
  const url = withDatabase(TEST_ADMIN_URL, name);
  const admin = postgres(TEST_ADMIN_URL, { max: 1, onnotice: () => {} });
  let db: postgres.Sql | undefined;
  try {
    await admin.unsafe(`create database ${name}`);
    const first = await npmRun("db:setup", url);
    report(first.code === 0 && /sample seed loaded/.test(first.stdout), "a first db:setup loads the sample seed", first.stdout + first.stderr);
    db = postgres(url, { max: 1, onnotice: () => {} });
    const state = async () => {
      const [row] = await db!<{ task: number; bob: number }[]>`
        select (select count(*)::int from public.tasks where id = ${OAT_MILK}) as task,
               (select count(*)::int from public.list_members where list_id = ${GROCERIES} and user_id = ${BOB}) as bob`;
      return row;
    };
    // As Alice through RLS (what the Data API does): delete her sample task, remove Bob from her shared list.
    await db.begin(async (tx) => {
      await tx`select set_config('request.jwt.claims', ${JSON.stringify(ALICE)}, true)`;
      await tx`set local role authenticated`;
      await tx`delete from public.tasks where id = ${OAT_MILK}`;
      await tx`delete from public.list_members where list_id = ${GROCERIES} and user_id = ${BOB}`;
    });
    const before = await state();
    const second = await npmRun("db:setup", url);
    const after = await state();
    report(second.code === 0 && before.task === 0 && before.bob === 0 && after.task === 0 && after.bob === 0 &&
      /sample seed not loaded: the database already had the schema/.test(second.stdout),
      "a second db:setup keeps a deleted sample task deleted and a removed member removed", JSON.stringify({ before, after }) + "\n" + second.stdout + second.stderr);

    // Bob signed out (his sample session gone): npm start says so instead of printing a token that answers 401.
    await db`delete from auth.sessions where user_id = ${BOB}`;
    // The developer's own settings, which npm start replaced with its dev values (and its tokens' iss was :54321's).
    const port = await freePort();
    const issuer = `http://localhost:${port}/auth/v1`;
    const webhookSecret = `whsec_${randomBytes(32).toString("base64")}`;
    const start = await npmStartUntilUp({ DATABASE_URL: url, TIDESYNC_PORT: String(port), TIDESYNC_HOST: "0.0.0.0",
      TIDESYNC_JWT_ISSUER: issuer, TIDESYNC_RELEASES_WEBHOOK_SECRET: webhookSecret });
    try {
      const api = /^API\s+(http:\/\/127\.0\.0\.1:\d+\/functions\/v1\/api\/v1)\/meta$/m.exec(start.output)?.[1];
      const alice = /^ {4}(eyJ[\w-]+\.[\w-]+\.[\w-]+)$/m.exec(start.output)?.[1];
      const whoami = api && alice ? await fetch(`${api}/whoami`, { headers: { Authorization: `Bearer ${alice}` } }) : undefined;
      await whoami?.body?.cancel();
      const kept = await state();
      report(start.up && whoami?.status === 200 && kept.task === 0 && kept.bob === 0 &&
        (start.output.match(/^ {4}eyJ/gm) ?? []).length === 1 && /no token: this user or their sample session is no longer in the database/.test(start.output) &&
        /start the sample over: npm run db:reset/.test(start.output),
        "npm start on that database keeps its data, prints Alice's working token and says Bob's session is gone",
        `whoami ${whoami?.status}, ${JSON.stringify(kept)}\n${start.output.slice(-3000)}`);
      report(start.up && !/\bBOB=/.test(start.output) && /left out: it needs both Alice's and Bob's sample sessions, and Bob \(sample\) has none here/.test(start.output),
        "npm start exports no token for Bob, whose session is gone, and says why his commands are left out", start.output.slice(-3000));
      const feedback = api ? await signedFeedbackRead(api, webhookSecret) : undefined;
      report(start.up && whoami?.status === 200 && feedback === 200 && new RegExp(`"iss":"${issuer}"`).test(Buffer.from(alice!.split(".")[1], "base64url").toString()),
        "npm start keeps the developer's TIDESYNC_JWT_ISSUER (its tokens carry it) and TIDESYNC_RELEASES_WEBHOOK_SECRET (CI signs with it)",
        `whoami ${whoami?.status}, signed feedback read ${feedback}\n${start.output.slice(-3000)}`);
      report(start.up && new RegExp(`^Database\\s+postgres://${OWNER_ROLE}@`, "m").test(start.output),
        "npm start on a superuser's DATABASE_URL gives the function the database owner's connection, not the superuser's", start.output.slice(-3000));
      report(start.up && /^From a phone \(TIDESYNC_HOST=0\.0\.0\.0, every interface\): /m.test(start.output) && !/http:\/\/0\.0\.0\.0/.test(start.output.slice(start.output.indexOf("tidesync is up"))),
        "npm start with TIDESYNC_HOST=0.0.0.0 listens there, prints 127.0.0.1 URLs and the ones for a phone", start.output.slice(-3000));
    } finally {
      await start.stop();
    }
  } catch (error) {
    report(false, "the db:setup / npm start data checks ran to their end", (error as Error).stack ?? String(error));
  } finally {
    await db?.end();
    await admin.end();
    await dropDatabase(TEST_ADMIN_URL, name);
  }
}

/** A database of its own, owned by the owner role, with the stand-in applied; `prepare` runs as the superuser. */
async function withStandinDatabase(prefix: string, prepare: (admin: postgres.Sql) => Promise<void>,
  check: (ownerUrl: string, admin: postgres.Sql) => Promise<void>): Promise<void> {
  const name = temporaryDatabaseName(prefix);
  let admin: postgres.Sql | undefined;
  try {
    const ownerUrl = await provisionDatabase(TEST_ADMIN_URL, name, { recreate: true });
    await applyStandin(withDatabase(TEST_ADMIN_URL, name), OWNER_ROLE);
    admin = postgres(withDatabase(TEST_ADMIN_URL, name), { max: 1, onnotice: () => {} });
    await prepare(admin);
    await check(ownerUrl, admin);
  } finally {
    await admin?.end();
    await dropDatabase(TEST_ADMIN_URL, name);
  }
}

async function sampleFootprint(sql: postgres.Sql): Promise<{ sampleUsers: number; everyoneGroups: number; tasks: number }> {
  const [row] = await sql<{ sampleUsers: number; everyoneGroups: number; tasks: number }[]>`
    select (select count(*)::int from auth.users where email like '%@sample.tidesync.dev') as "sampleUsers",
           (select count(*)::int from app_private.tester_groups where everyone) as "everyoneGroups",
           (select count(*)::int from public.tasks) as tasks`;
  return row;
}

/**
 * db:setup on a real Supabase database that has users loads no sample. It loaded it whenever no migration
 * was recorded: alice@/bob@ with the README's password, and an "Everyone (sample)" group with sample builds
 * that answered a real user's update check with `required`.
 */
async function seedStaysOutOfRealDatabases(report: Report): Promise<void> {
  const name = "db:setup on a Supabase database with a user of its own loads no sample, and says why";
  try {
    await withStandinDatabase("tidesync_realusers", async (admin) => {
      await admin`comment on schema auth is null`; // no stand-in marker: a Supabase database (databaseKind)
      await insertAuthUser(admin, crypto.randomUUID(), { email: "someone@example.com" });
    }, async (ownerUrl, admin) => {
      const result = await npmRun("db:setup", ownerUrl);
      const footprint = await sampleFootprint(admin);
      report(result.code === 0 && footprint.sampleUsers === 0 && footprint.everyoneGroups === 0 &&
        /\(Supabase database\)/.test(result.stdout) && /sample seed not loaded: this is a real Supabase database.*--seed/.test(result.stdout),
        name, `status ${result.code}, ${JSON.stringify(footprint)}\n${result.stdout}${result.stderr}`);
    });
  } catch (error) {
    report(false, name, (error as Error).stack ?? String(error));
  }
}

/**
 * A stand-in whose auth.users still has the sample users when no migration is recorded (what rolling back
 * every migration leaves: Supabase Auth's tables are not ours) is not new: db:setup loads no seed and says why.
 * It seeded and ended with status 1 (tasks_list_id_fkey: the users' personal lists came from a signup trigger
 * the kept users never met). The migrations give them what signup gives, as any user from before them (their
 * profile, 20261122020100; their personal list, 20261128009700), so asked with --seed, it loads.
 */
async function seedAfterEveryRollback(report: Report): Promise<void> {
  const name = "db:setup after every migration was rolled back loads no seed (auth.users has users) and gives the kept users their personal lists; --seed loads it whole";
  try {
    await withStandinDatabase("tidesync_rolledback", async (admin) => {
      await insertAuthUser(admin, ALICE.sub, { email: "alice@sample.tidesync.dev" });
      await insertAuthUser(admin, BOB, { email: "bob@sample.tidesync.dev" });
    }, async (ownerUrl, admin) => {
      const plain = await npmRun("db:setup", ownerUrl);
      const before = await sampleFootprint(admin);
      const [personal] = await admin<{ n: number }[]>`
        select count(*)::int as n from public.lists l join public.list_members m on m.list_id = l.id and m.user_id = l.id and m.role = 'owner'
         where l.id in (${ALICE.sub}, ${BOB}) and l.created_by = l.id`;
      const asked = await npmRun("db:setup", ownerUrl, ["--seed"]);
      const after = await sampleFootprint(admin);
      const [bobsOwn] = await admin<{ n: number }[]>`select count(*)::int as n from public.tasks where list_id = ${BOB}`;
      report(plain.code === 0 && before.tasks === 0 && personal.n === 2 && /sample seed not loaded: auth\.users already has 2 users.*--seed/.test(plain.stdout) &&
        asked.code === 0 && /sample seed loaded/.test(asked.stdout) && after.tasks > 0 && after.everyoneGroups === 1 && bobsOwn.n === 1,
        name, `${JSON.stringify({ before, personalLists: personal.n, after, bobsOwn })}\nstatus ${plain.code}\n${plain.stdout}${plain.stderr}\n--seed: status ${asked.code}\n${asked.stdout}${asked.stderr}`);
    });
  } catch (error) {
    report(false, name, (error as Error).stack ?? String(error));
  }
}

/** Whether app_private's owner (the role the migrations ran as) is a superuser; null when there is no app_private. */
async function schemaOwnerIsSuperuser(sql: postgres.Sql): Promise<boolean | null> {
  const [row] = await sql<{ super: boolean | null }[]>`
    select (select r.rolsuper from pg_namespace n join pg_roles r on r.oid = n.nspowner where n.nspname = 'app_private') as super`;
  return row.super;
}

/**
 * db:setup with a superuser's DATABASE_URL on a database a superuser made runs the migrations as a
 * non-superuser owner, as hosted Supabase does. It ran them as the superuser: app_private and every
 * SECURITY DEFINER function belonged to it, and a privilege a migration lacks on Supabase went unnoticed.
 * A schema already applied that way is refused, and db:reset starts it over as a non-superuser.
 */
async function migrationsNeverRunAsSuperuser(report: Report): Promise<void> {
  const admin = postgres(TEST_ADMIN_URL, { max: 1, onnotice: () => {} });
  const names = [temporaryDatabaseName("tidesync_superowned"), temporaryDatabaseName("tidesync_superapplied")];
  try {
    for (const name of names) await admin.unsafe(`create database ${name}`); // owned by the superuser, as createdb makes it
    const [fresh, applied] = names.map((name) => withDatabase(TEST_ADMIN_URL, name));
    const setup = await npmRun("db:setup", fresh, ["--no-seed"]);
    const freshSql = postgres(fresh, { max: 1, onnotice: () => {} });
    const superOwned = await schemaOwnerIsSuperuser(freshSql).finally(() => freshSql.end());
    report(setup.code === 0 && superOwned === false && new RegExp(`WARNING: .*its owner is now ${OWNER_ROLE}`).test(setup.stdout),
      "db:setup with a superuser's URL on a database a superuser owns runs the migrations as a non-superuser owner, and says so",
      `status ${setup.code}, app_private owned by a superuser: ${superOwned}\n${setup.stdout}${setup.stderr}`);

    // What the old db:setup left: the stand-in for the superuser, and our schema belonging to it.
    await applyStandin(applied, "postgres");
    const appliedSql = postgres(applied, { max: 1, onnotice: () => {} });
    try {
      await appliedSql`create schema app_private`;
      const refused = await npmRun("db:setup", applied);
      report(refused.code === 1 && /applied by the superuser postgres .*npm run db:reset/.test(refused.stderr),
        "db:setup refuses a schema a superuser applied, and names db:reset", `status ${refused.code}\n${refused.stdout}${refused.stderr}`);
    } finally {
      await appliedSql.end();
    }
    const reset = await npmRun("db:reset", applied);
    const resetSql = postgres(applied, { max: 1, onnotice: () => {} });
    const afterReset = await schemaOwnerIsSuperuser(resetSql).finally(() => resetSql.end());
    report(reset.code === 0 && afterReset === false, "db:reset starts that database over with the migrations run as a non-superuser",
      `status ${reset.code}, app_private owned by a superuser: ${afterReset}\n${reset.stdout}${reset.stderr}`);
  } catch (error) {
    report(false, "the migration-role checks ran to their end", (error as Error).stack ?? String(error));
  } finally {
    await admin.end();
    for (const name of names) await dropDatabase(TEST_ADMIN_URL, name);
  }
}

const CHECKS = [refusedConfigurationExits, malformedDatabaseUrlIsNamed, portInUseIsRefused, setupAndResetRefuseOtherDatabases, setupKeepsTheData, seedStaysOutOfRealDatabases, seedAfterEveryRollback, migrationsNeverRunAsSuperuser];

/** Every check, or those whose function name contains `only` (`npx tsx scripts/local-stack-checks.ts seed`). */
export async function localStackChecks(reportAll: Report, only?: string): Promise<void> {
  // What a check saw (whole npm start banners, tokens included) is shown only when it fails.
  const report: Report = (ok, name, detail) => reportAll(ok, name, ok ? undefined : detail);
  for (const check of CHECKS) if (!only || check.name.toLowerCase().includes(only.toLowerCase())) await check(report);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  let failed = 0;
  await localStackChecks((ok, name, detail) => {
    if (!ok) failed++;
    console.log(`${ok ? "ok  " : "FAIL"}  ${name}${detail ? `\n${detail.replace(/^/gm, "        ")}` : ""}`);
    return ok;
  }, process.argv[2]);
  process.exit(failed === 0 ? 0 : 1);
}

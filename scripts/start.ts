// `npm start`: the local stack, without Docker.
//   * Database: DATABASE_URL when given (brought to the current schema with
//     setupDatabase), else an embedded Postgres in .data/postgres (port
//     TIDESYNC_DB_PORT, default 54322) with a database `tidesync` owned by the
//     non-superuser tidesync_owner (hosted Supabase's `postgres`).
//   * Stand-in (if not Supabase), migrations via `supabase db push`, and the
//     sample seed when the schema is new and auth.users empty, never into a
//     real Supabase database unless `-- --seed` (decideSeed): a later start
//     keeps the data as it is. `npm start -- --reset` recreates the embedded
//     database first.
//   * The functions on real Deno at http://127.0.0.1:54321/functions/v1/api/...
//     (TIDESYNC_PORT, TIDESYNC_HOST), the URL shape of `supabase functions serve`.
//   * Prints the API URL, the sample users and, for each, an access token in
//     Supabase's claim shape, bound to its seeded session and signed with a
//     dev-only key (.data/dev-signing-key.json); and a warning naming the synced
//     tables that differ from functions/_shared/sync-collections.generated.ts,
//     and what of them (a migration without `npm run generate`).
// Ctrl-C / SIGTERM stops Deno, then the embedded Postgres.
import os from "node:os";
import path from "node:path";
import { databaseUrlSetting, OWNER_ROLE, provisionDatabase, type SeedChoice, setupDatabase, withDatabase } from "./db/database.ts";
import { signEs256, supabaseClaims } from "./lib/access-tokens.ts";
import { mkdir, writeFile } from "node:fs/promises";
import { intSetting, TCP_PORT } from "../functions/_shared/int-setting.ts";
import { issuerSetting } from "../functions/api/lib/config.ts";
import { DEFAULT_ARTIFACT_BUCKET } from "../functions/api/releases/release-config.ts";
import { DATA_DIR, devReleaseSecrets, devSecrets, devSigningKey } from "./lib/dev-secrets.ts";
import { startEmbeddedPostgres } from "./lib/embedded-postgres.ts";
import { type FunctionsProcess, startFunctionsProcess } from "./lib/functions-process.ts";
import { ROOT } from "./lib/paths.ts";
import { isWildcardHost, urlHost } from "./lib/url-host.ts";
import { assertPortFree } from "./lib/ports.ts";
import { isShuttingDown, onShutdown, runCleanups } from "./lib/shutdown.ts";
import { loadSampleTodo } from "./seed/sample-todo.ts";
import { loadSampleUsers } from "./seed/sample-users.ts";
import { sampleArtifacts } from "./seed/sample-releases.ts";
import postgres from "postgres";
import { SYNC_COLLECTIONS } from "../functions/_shared/sync-collections.generated.ts";
import { generatedCollectionsWarning, readGeneratedCollectionsDrift } from "./lib/generated-collections-drift.ts";
import { redactUrl } from "./lib/redact.ts";

const DEV_DATABASE = "tidesync";
const DEV_TOKEN_TTL_SECONDS = 24 * 3600;

function port(name: string, fallback: number): number {
  return intSetting(process.env, name, fallback, TCP_PORT);
}


const log = (line: string) => console.log(`  · ${line}`);
const seedChoice: SeedChoice = process.argv.includes("--seed") ? "always" : "if-new";

/** This machine's IPv4 addresses on its networks (what a phone on the same Wi-Fi connects to). */
function networkAddresses(): string[] {
  return Object.values(os.networkInterfaces()).flat().filter((a) => a && a.family === "IPv4" && !a.internal).map((a) => a!.address);
}

/** The embedded cluster, set up: returns the URL the functions use and the superuser one for the database. */
async function embeddedDatabase(): Promise<{ functionsDbUrl: string; adminDbUrl: string; description: string }> {
  const secrets = await devSecrets();
  const dbPort = port("TIDESYNC_DB_PORT", 54322);
  log(`starting the embedded Postgres on 127.0.0.1:${dbPort} (data in ${path.relative(ROOT, path.join(DATA_DIR, "postgres"))})`);
  const cluster = await startEmbeddedPostgres({ dataDir: path.join(DATA_DIR, "postgres"), port: dbPort, password: secrets.postgres_password });
  onShutdown(async () => {
    await cluster.stop();
    console.log("embedded Postgres stopped");
  });
  if (cluster.created) log("created a new cluster (first start)");

  const reset = process.argv.includes("--reset");
  if (reset) log(`--reset: dropping and recreating the database ${DEV_DATABASE}`);
  await provisionDatabase(cluster.superuserUrl, DEV_DATABASE, { recreate: reset });
  // The owner role logs in with a password here (scram), as hosted `postgres` does.
  const sql = postgres(cluster.superuserUrl, { max: 1, onnotice: () => {} });
  try {
    await sql.unsafe(`alter role ${OWNER_ROLE} password '${secrets.owner_password.replaceAll("'", "''")}'`);
  } finally {
    await sql.end();
  }
  const adminDbUrl = withDatabase(cluster.superuserUrl, DEV_DATABASE);
  const owner = new URL(adminDbUrl);
  owner.username = OWNER_ROLE;
  owner.password = secrets.owner_password;
  await setupDatabase({ adminUrl: adminDbUrl, migrationUrl: owner.toString(), seed: seedChoice, log });
  return { functionsDbUrl: owner.toString(), adminDbUrl, description: "embedded; data in .data/postgres, log in .data/postgres.log" };
}

/** Which of the sample sessions (and so their users) the database still has: the printed tokens are bound to them. */
async function sampleSessionsPresent(url: string, sessionIds: string[]): Promise<Set<string>> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    const rows = await sql<{ id: string }[]>`select s.id::text as id from auth.sessions s join auth.users u on u.id = s.user_id where s.id = any(${sessionIds}::uuid[])`;
    return new Set(rows.map((r) => r.id));
  } catch {
    return new Set(sessionIds); // cannot tell (a role that may not read auth): print them all
  } finally {
    await sql.end();
  }
}

async function main(): Promise<void> {
  console.log("tidesync local stack (development only)");
  const databaseUrl = databaseUrlSetting("DATABASE_URL");
  // Before the database is set up: a port in use fails at once (checked again when Deno starts).
  const apiPort = port("TIDESYNC_PORT", 54321);
  const apiHost = process.env.TIDESYNC_HOST || "127.0.0.1";
  await assertPortFree(apiPort, apiHost, "TIDESYNC_PORT", "the functions");
  let db: { functionsDbUrl: string; adminDbUrl: string; description: string };
  if (databaseUrl) {
    log(`using DATABASE_URL ${redactUrl(databaseUrl)}`);
    // Migrations, seed and the function run as the database owner (or DATABASE_OWNER_URL), never as a superuser of DATABASE_URL.
    const { migrationUrl } = await setupDatabase({ adminUrl: databaseUrl, migrationUrl: databaseUrlSetting("DATABASE_OWNER_URL"), seed: seedChoice, log });
    db = { functionsDbUrl: migrationUrl, adminDbUrl: databaseUrl, description: "DATABASE_URL" };
  } else {
    db = await embeddedDatabase();
  }

  // A migration applied without `npm run generate`: the function (started from the generated
  // file) would leave a synced table out, answer 503 for one, or check pushes by a table's old
  // shape, without a word here.
  const driftWarning = generatedCollectionsWarning(await readGeneratedCollectionsDrift(db.adminDbUrl, SYNC_COLLECTIONS) ?? []);

  const { value: key, created } = await devSigningKey();
  if (created) log("generated the dev-only signing key .data/dev-signing-key.json");
  const secrets = await devSecrets();
  const releaseSecrets = await devReleaseSecrets();
  // What the developer set wins over the dev values (docs/configuration.md); empty counts as unset, as in .env.example.
  const given = (name: string) => process.env[name] || undefined;
  const artifactStore = given("TIDESYNC_ARTIFACT_STORE") ?? "local";
  // Supabase Storage stand-in: the sample builds' artifacts, served by the gateway as signed links.
  const storageDir = given("TIDESYNC_LOCAL_STORAGE_DIR") ?? path.join(DATA_DIR, "storage");
  if (artifactStore === "local") {
    for (const artifact of await sampleArtifacts()) {
      const file = path.join(storageDir, DEFAULT_ARTIFACT_BUCKET, artifact.path);
      await mkdir(path.dirname(file), { recursive: true });
      await writeFile(file, artifact.bytes);
    }
  }
  // The dev tokens' `iss`: what the function checks when TIDESYNC_JWT_ISSUER is set, else Supabase Auth's URL on this stack.
  const issuer = issuerSetting(given("TIDESYNC_JWT_ISSUER")) ?? `http://${urlHost(isWildcardHost(apiHost) ? "127.0.0.1" : apiHost)}:${apiPort}/auth/v1`;
  const webhookSecret = given("TIDESYNC_RELEASES_WEBHOOK_SECRET");

  log(`starting the functions with Deno on ${urlHost(apiHost)}:${apiPort}${isWildcardHost(apiHost) ? ` (listening on ${apiHost}: every interface)` : ""}`);
  // On every interface, a phone reaches the stack at this machine's network address: so do the download links.
  const lanUrls = isWildcardHost(apiHost) ? networkAddresses().map((address) => `http://${address}:${apiPort}`) : [];
  let functions: FunctionsProcess | undefined;
  // However this process ends, Deno must not outlive it.
  process.on("exit", () => functions?.process.kill("SIGTERM"));
  onShutdown(async () => {
    await functions?.stop();
    if (functions) console.log("functions stopped");
  });
  functions = await startFunctionsProcess({
    env: {
      SUPABASE_DB_URL: db.functionsDbUrl,
      SUPABASE_JWKS: JSON.stringify(key.public_jwks),
      TIDESYNC_CURSOR_SECRET: given("TIDESYNC_CURSOR_SECRET") ?? secrets.cursor_secret,
      TIDESYNC_RELEASES_WEBHOOK_SECRET: webhookSecret ?? releaseSecrets.webhook_secret,
      TIDESYNC_ARTIFACT_STORE: artifactStore,
      TIDESYNC_LOCAL_STORAGE_DIR: storageDir,
      TIDESYNC_LOCAL_STORAGE_SECRET: given("TIDESYNC_LOCAL_STORAGE_SECRET") ?? releaseSecrets.local_storage_secret,
      TIDESYNC_EXPO_SIGNING_KEY: given("TIDESYNC_EXPO_SIGNING_KEY") ?? releaseSecrets.expo_signing_key_pem,
      ...(lanUrls[0] && !process.env.TIDESYNC_LOCAL_STORAGE_URL ? { TIDESYNC_LOCAL_STORAGE_URL: `${lanUrls[0]}/storage/v1` } : {}),
    },
    port: apiPort,
    host: apiHost,
    output: "inherit",
    readyTimeoutMs: 120_000,
  });

  const sample = await loadSampleUsers();
  const present = await sampleSessionsPresent(db.adminDbUrl, sample.users.map((u) => u.session_id));
  const users = await Promise.all(sample.users.map(async (u) => ({
    ...u,
    present: present.has(u.session_id),
    variable: u.display_name.split(" ")[0].toUpperCase(),
    token: await signEs256(key.private_jwk, supabaseClaims({
      userId: u.id,
      sessionId: u.session_id,
      email: u.email,
      issuer,
      expiresInSeconds: DEV_TOKEN_TTL_SECONDS,
      claims: { app_metadata: { provider: "email", providers: ["email"], sample: true } },
    })),
  })));

  // The commands below name Alice and Bob (fixtures/sample-users.json); a user whose sample session is gone gets none.
  const [alice, bob] = users;
  const gone = users.filter((u) => !u.present);
  const names = (who: typeof users) => who.map((u) => u.display_name).join(" and ");
  const startOver = process.env.DATABASE_URL ? "npm run db:reset" : "npm start -- --reset";
  const api = `${functions.apiUrl}/v1`;
  // The sample list Alice shares with Bob (fixtures/sample-todo.json).
  const shared = (await loadSampleTodo()).lists.find((l) => !l.personal && l.members.length > 0);
  const lines = [
    "",
    "━━ tidesync is up (development only) ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━",
    `API        ${api}/meta`,
    `OpenAPI    ${api}/openapi.json`,
    ...(isWildcardHost(apiHost)
      ? [`From a phone (TIDESYNC_HOST=${apiHost}, every interface): ${lanUrls.length ? lanUrls.map((u) => `${u}/functions/v1/api/v1`).join("  ") : "no network address found on this machine"}`]
      : []),
    `Database   ${redactUrl(db.functionsDbUrl)} (${db.description})`,
    `           start the data over: ${startOver}`,
    "",
    `Sample users (SAMPLE DATA, password "${sample.password}"), with dev-only access tokens (valid ${DEV_TOKEN_TTL_SECONDS / 3600} h,`,
    "signed by .data/dev-signing-key.json, bound to each user's seeded session; worthless anywhere else):",
    ...users.flatMap((u) => [
      `  ${u.display_name.padEnd(16)} ${u.email}  user ${u.id}  session ${u.session_id}`,
      u.present ? `    ${u.token}` : "    (no token: this user or their sample session is no longer in the database)",
    ]),
    ...(gone.length === 0 ? [] : [
      "Some of the sample is not in this database (npm start keeps the data as it is), so the commands below that need",
      `${names(gone)} are left out: a token of theirs could only get 401. To start the sample over: ${startOver} (this deletes everything in the database).`,
    ]),
    "",
    "Try:",
    `  curl ${api}/meta`,
    ...(alice.present ? [`  curl -H "Authorization: Bearer ${alice.token}" ${api}/whoami`] : []),
    "",
    "Watch Bob's device receive Alice's change (Alice shares \"Groceries (sample)\" with Bob as editor):",
    `  export API=${api}${users.filter((u) => u.present).map((u) => ` ${u.variable}=${u.token}`).join("")}`,
    ...(alice.present && bob.present ? [
      `  CURSOR=$(curl -s -H "Authorization: Bearer $BOB" "$API/sync/changes" | node -pe 'JSON.parse(require("fs").readFileSync(0)).cursor')`,
      `  curl -s -X POST -H "Authorization: Bearer $ALICE" -H "Content-Type: application/json" "$API/sync/batch" \\`,
      `    -d '{"ops":[{"op_id":"'$(node -pe 'crypto.randomUUID()')'","collection":"tasks","record_id":"'$(node -pe 'crypto.randomUUID()')'","type":"upsert","base_version":null,"data":{"list_id":"${shared?.id}","title":"Apples"}}]}'`,
      `  curl -s -H "Authorization: Bearer $BOB" "$API/sync/changes?cursor=$CURSOR"    # Bob's next pull lists Alice's new task`,
    ] : [`  (left out: it needs both Alice's and Bob's sample sessions, and ${names(gone)} ${gone.length === 1 ? "has" : "have"} none here)`]),
    "",
    "Test builds (docs/test-builds.md): Alice is a beta tester; is there a newer iOS beta build than her 140?",
    ...(alice.present ? [`  curl -s -H "Authorization: Bearer $ALICE" "$API/releases/check?platform=ios&channel=beta&build_number=140"`] : []),
    ...(bob.present ? [`  curl -s -H "Authorization: Bearer $BOB" "$API/releases/check?platform=ios&channel=beta&build_number=140"     # Bob is no tester: level none`] : []),
    ...(alice.present ? [`  curl -s -H "Authorization: Bearer $ALICE" "$API/releases/check?platform=ios&channel=production&build_number=120"   # below the minimum: required`] : []),
    ...(gone.length ? [`  (the checks of ${names(gone)} are left out)`] : []),
    `CI publishes with ${webhookSecret ? "your TIDESYNC_RELEASES_WEBHOOK_SECRET" : "the dev webhook secret in .data/dev-release-secrets.json"} (see docs/test-builds.md for the signing step).`,
    "",
    ...(driftWarning ? [driftWarning, ""] : []),
    "Ctrl-C stops everything.",
    "",
  ];
  console.log(lines.join("\n"));

  // Stay up until a signal (handled by onShutdown) or until Deno dies.
  await new Promise<void>((resolve) => functions!.process.once("exit", () => resolve()));
  if (isShuttingDown()) return;
  console.error("the functions server exited; stopping");
  await runCleanups();
  process.exit(1);
}

main().catch(async (error) => {
  console.error(error instanceof Error ? error.message : error);
  await runCleanups();
  process.exit(1);
});

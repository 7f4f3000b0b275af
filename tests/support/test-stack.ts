// The integration stack: a database of its own (stand-in + migrations through
// the real CLI, applied as the non-superuser owner role), and the functions
// served by real Deno on it. Created by vitest's globalSetup, dropped after
// (unless `npm test` lent it its own database: see EXTERNAL_DATABASE_ENV).
import { generateKeyPairSync, randomBytes } from "node:crypto";
import { rm } from "node:fs/promises";
import path from "node:path";
import { dropDatabase, OWNER_ROLE, provisionDatabase, setupDatabase, withDatabase, withUser } from "../../scripts/db/database.ts";
import { TEST_ADMIN_URL } from "../../scripts/lib/temp-database.ts";
import { ROOT } from "../../scripts/lib/paths.ts";
import { type FunctionsServer, startFunctionsServer } from "./functions-server.ts";
import { createSigningKeys, type SigningKeys } from "./signing-keys.ts";

/** Superuser connection to the machine's Postgres (tests create and drop their own databases). */
export const ADMIN_URL = TEST_ADMIN_URL;

export interface StackInfo {
  database: string;
  /** Superuser URL of the test database (for fixtures and assertions). */
  adminDbUrl: string;
  /** The owner (hosted `postgres`) URL the functions connect with. */
  ownerDbUrl: string;
  apiUrl: string;
  keys: SigningKeys;
  /** Environment the functions server was started with (for starting variants). */
  functionsEnv: Record<string, string>;
  /** Where the functions server writes its output (its request log lines: request-log.ts). */
  logFile: string;
}

export interface TestStack {
  info: StackInfo;
  server: FunctionsServer;
  stop(): Promise<void>;
}

export function functionsEnvFor(ownerDbUrl: string, keys: SigningKeys, extra: Record<string, string> = {}): Record<string, string> {
  return {
    SUPABASE_DB_URL: ownerDbUrl,
    SUPABASE_JWKS: JSON.stringify(keys.publicJwks),
    SUPABASE_JWT_SECRET: keys.hsSecret,
    // Generous budgets so parallel test files do not trip each other; the
    // rate-limit test starts its own server with tiny ones.
    TIDESYNC_RATE_LIMITS: JSON.stringify({
      "auth.session": { limit: 100000, window_seconds: 60 },
      "devices": { limit: 100000, window_seconds: 60 },
      "notifications": { limit: 100000, window_seconds: 60 },
      "releases": { limit: 100000, window_seconds: 60 },
      // A sync budget's default ceiling on the user's total (user_limit) is below these limits: raised too.
      "sync.pull": { limit: 100000, window_seconds: 60, user_limit: 100000 },
      "sync.batch": { limit: 100000, window_seconds: 60, user_limit: 100000 },
      "account.deletion": { limit: 100000, window_seconds: 60 },
      "account.export": { limit: 100000, window_seconds: 60 },
    }),
    // A fresh secret per run: no cursor outlives its stack.
    TIDESYNC_CURSOR_SECRET: randomBytes(32).toString("base64url"),
    // Test-build distribution: CI's webhook secret, the local artifact store
    // (signed links served by the gateway from a directory of this stack) and
    // an Expo code-signing key, all fresh per stack.
    TIDESYNC_RELEASES_WEBHOOK_SECRET: `whsec_${randomBytes(32).toString("base64")}`,
    TIDESYNC_ARTIFACT_STORE: "local",
    TIDESYNC_LOCAL_STORAGE_SECRET: randomBytes(32).toString("base64url"),
    TIDESYNC_LOCAL_STORAGE_DIR: path.join(ROOT, ".cache", "test-storage", randomBytes(4).toString("hex")),
    TIDESYNC_EXPO_SIGNING_KEY: generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
    ...extra,
  };
}

/**
 * Set by `npm test` (scripts/test-all.ts): the name of a database it already
 * set up on TEST_DATABASE_URL. The stack then uses it and leaves it alive, so
 * the orchestrator can run the database advisors on the very database the
 * integration tests exercised (unused_index needs the indexes used), then drop it.
 */
export const EXTERNAL_DATABASE_ENV = "TIDESYNC_IT_DATABASE";

export async function startTestStack(prefix = "tidesync_it"): Promise<TestStack> {
  const external = process.env[EXTERNAL_DATABASE_ENV];
  const database = external ?? `${prefix}_${randomBytes(4).toString("hex")}`;
  const adminDbUrl = withDatabase(ADMIN_URL, database);
  const ownerDbUrl = external ? withUser(adminDbUrl, OWNER_ROLE) : await provisionDatabase(ADMIN_URL, database, { recreate: true });
  const dropOwn = async () => {
    if (!external) await dropDatabase(ADMIN_URL, database);
  };
  try {
    if (!external) await setupDatabase({ adminUrl: adminDbUrl, migrationUrl: ownerDbUrl, seed: "always" });
    const keys = await createSigningKeys();
    const functionsEnv = functionsEnvFor(ownerDbUrl, keys);
    const server = await startFunctionsServer(functionsEnv, { name: database });
    const info: StackInfo = { database, adminDbUrl, ownerDbUrl, apiUrl: server.apiUrl, keys, functionsEnv, logFile: server.logFile };
    return {
      info,
      server,
      async stop() {
        await server.stop();
        await dropOwn();
        // The artifacts the release tests wrote for the local artifact store.
        await rm(functionsEnv.TIDESYNC_LOCAL_STORAGE_DIR, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await dropOwn().catch(() => {});
    throw error;
  }
}

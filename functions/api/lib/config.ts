// Reads the function's environment once, at start-up, into a typed Config.
// A missing or malformed setting stops the function with a clear message
// instead of failing on the first request (loadStartUpConfig). Every variable
// is listed in README.
import { z } from "zod";
import { type IntRange, intSetting, MAX_TIMER_MS } from "../../_shared/int-setting.ts";
import { type Limits, loadLimits } from "../../_shared/limits.ts";
import type { Deprecation } from "../../_shared/schemas/deprecation.ts";
import { importSigningKey } from "../releases/expo-response.ts";
import { loadReleaseConfig, type ReleaseConfig } from "../releases/release-config.ts";
import { loadDeprecations } from "./deprecations.ts";
import { DEFAULT_RATE_LIMITS, mergeRateLimits, type RateLimitRule, rateLimitRulesSchema } from "./rate-limit-rules.ts";
import { importKeySet } from "./verify-token.ts";

export interface Config {
  dbUrl: string;
  db: {
    poolMax: number;
    /** Requests worked on at once per process (the rest wait before their body is read). */
    maxConcurrentRequests: number;
    /**
     * Data exports streaming at once per process, each holding a pool connection
     * for its whole download; one more answers 429 RATE_LIMITED (routes/account-export.ts).
     * At most poolMax - 1, so that one connection always stays for the other requests.
     */
    maxConcurrentExports: number;
    connectTimeoutSeconds: number;
    statementTimeoutMs: number;
    /** Named prepared statements; off behind a transaction pooler (port 6543). */
    prepare: boolean;
  };
  auth: {
    /** Inline JWKS (SUPABASE_JWKS): public keys for ES256/RS256 tokens. */
    jwks?: { keys: Record<string, unknown>[] };
    /** Where to fetch the project's JWKS when not inline. */
    jwksUrl?: string;
    /** Legacy shared HS256 secret (TIDESYNC_JWT_SECRET, or SUPABASE_JWT_SECRET), only when configured. */
    hsSecret?: string;
    /** Expected `iss`; unchecked when unset (local CLI stacks rewrite hosts). */
    issuer?: string;
  };
  http: {
    /**
     * How long a request's body may take to arrive once the route starts
     * reading it (TIDESYNC_BODY_READ_TIMEOUT_MS); later → 408 REQUEST_TIMEOUT.
     */
    bodyReadTimeoutMs: number;
  };
  limits: Limits;
  rateLimits: Record<string, RateLimitRule>;
  /** HMAC key of the sync pull cursors (TIDESYNC_CURSOR_SECRET); rotating it invalidates every cursor. */
  cursorSecret: string;
  /** Deprecated routes (lib/deprecations.ts; TIDESYNC_DEPRECATIONS adds rows for tests). */
  deprecations: Deprecation[];
  /** Test-build distribution: webhook secret, artifact storage, download links, Expo code signing. */
  releases: ReleaseConfig;
}

/** Shortest accepted TIDESYNC_CURSOR_SECRET: 32 characters, e.g. `openssl rand -base64 32`. */
export const MIN_CURSOR_SECRET_LENGTH = 32;

const jwksSchema = z.object({ keys: z.array(z.record(z.string(), z.unknown())).min(1) });

/**
 * What each numeric setting of the function accepts (docs/configuration.md
 * lists the ranges; the limits' are LIMIT_RANGES). Timers stay within
 * setTimeout's 2^31-1 ms (a longer delay fires after 1 ms): the connect
 * timeout is given in seconds, the client's bound on database work is the
 * statement timeout + 1 s. Postgres takes its timeouts as an int of ms, and
 * the idle-in-transaction timeout is twice the statement timeout.
 */
export const SETTING_RANGES = {
  // At least 2: one connection for a data export, which holds it for its whole download, and one for the rest.
  TIDESYNC_DB_POOL_MAX: { min: 2, max: 1000 },
  TIDESYNC_CONCURRENT_REQUESTS: { min: 1, max: 10_000 },
  TIDESYNC_CONCURRENT_EXPORTS: { min: 1, max: 999 },
  TIDESYNC_DB_CONNECT_TIMEOUT_S: { min: 1, max: Math.floor(MAX_TIMER_MS / 1000) },
  TIDESYNC_DB_STATEMENT_TIMEOUT_MS: { min: 1, max: Math.floor(MAX_TIMER_MS / 2) },
  TIDESYNC_BODY_READ_TIMEOUT_MS: { min: 1, max: MAX_TIMER_MS },
} as const satisfies Record<string, IntRange>;

function setting(env: Record<string, string | undefined>, name: keyof typeof SETTING_RANGES, fallback: number): number {
  return intSetting(env, name, fallback, SETTING_RANGES[name]);
}

/** `true` or `false`, as written (docs/configuration.md); unset or empty: undefined. Anything else would silently mean one of them. */
function booleanSetting(env: Record<string, string | undefined>, name: string): boolean | undefined {
  const raw = env[name];
  if (raw === undefined || raw === "") return undefined;
  if (raw === "true" || raw === "false") return raw === "true";
  throw new Error(`${name} must be true or false (lower case), got ${JSON.stringify(raw)}`);
}

/**
 * The function's configuration, with SUPABASE_JWKS's keys (and the Expo signing key) imported as the
 * token verifier will import them (importKeySet): its start-up. WebCrypto
 * imports keys asynchronously, so loadConfig, which the OpenAPI generator and
 * the tests call, checks only the key set's shape.
 */
export async function loadStartUpConfig(env: Record<string, string | undefined>): Promise<Config> {
  const config = loadConfig(env);
  const { jwks, hsSecret } = config.auth;
  if (jwks) {
    const verifying = await importKeySet(jwks.keys).catch((error: Error) => {
      throw new Error(`SUPABASE_JWKS: ${error.message}`);
    });
    if (verifying === 0 && !hsSecret) {
      throw new Error("SUPABASE_JWKS holds no ES256 or RS256 public key, and no HS256 secret is set (TIDESYNC_JWT_SECRET): no token could be verified");
    }
  }
  // Imported here as the signer will (an EC key or a broken one passed loadConfig's PEM check, then every
  // code-signed manifest answered 500, and expo-updates hides a failed check: no update ever arrived).
  const signing = config.releases.expoSigning;
  if (signing) {
    await importSigningKey(signing.privateKeyPem).catch((error: Error) => {
      throw new Error(`TIDESYNC_EXPO_SIGNING_KEY: not an RSA private key the signer can use (${error.message})`);
    });
  }
  return config;
}

function isHttpUrl(text: string): boolean {
  try {
    return /^https?:$/.test(new URL(text).protocol);
  } catch {
    return false;
  }
}

function isPercentEncoded(text: string): boolean {
  try {
    decodeURIComponent(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * TIDESYNC_JWT_ISSUER as Supabase Auth writes `iss` (https://<ref>.supabase.co/auth/v1): an http(s)
 * URL without a trailing slash, which is dropped as SUPABASE_URL's is. Anything else started and then
 * refused every token. npm start signs its dev tokens with the same.
 */
export function issuerSetting(raw: string | undefined): string | undefined {
  if (!raw) return undefined;
  const issuer = raw.replace(/\/+$/, "");
  if (!isHttpUrl(issuer) || issuer !== issuer.trim()) {
    throw new Error(`TIDESYNC_JWT_ISSUER must be Supabase Auth's http(s) URL (e.g. https://<ref>.supabase.co/auth/v1), got ${JSON.stringify(raw)}`);
  }
  return issuer;
}

export function loadConfig(env: Record<string, string | undefined>): Config {
  const dbUrl = env.SUPABASE_DB_URL;
  if (!dbUrl) throw new Error("SUPABASE_DB_URL is required (the function's Postgres connection string)");

  let jwks: Config["auth"]["jwks"];
  if (env.SUPABASE_JWKS) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(env.SUPABASE_JWKS);
    } catch {
      throw new Error("SUPABASE_JWKS must be a JSON Web Key Set ({\"keys\": [...]})");
    }
    const result = jwksSchema.safeParse(parsed);
    if (!result.success) throw new Error("SUPABASE_JWKS must be a JSON Web Key Set with at least one key");
    jwks = result.data;
  }
  const supabaseUrl = env.SUPABASE_URL?.replace(/\/+$/, "");
  // The JWKS endpoint and Supabase Storage are reached there: anything but an http(s) URL failed later,
  // on every request, or at start-up with a message naming no variable.
  if (supabaseUrl && !isHttpUrl(supabaseUrl)) {
    throw new Error(`SUPABASE_URL must be the project's http(s) URL (e.g. https://<ref>.supabase.co), got ${JSON.stringify(env.SUPABASE_URL)}`);
  }
  const jwksUrl = jwks ? undefined : supabaseUrl ? `${supabaseUrl}/auth/v1/.well-known/jwks.json` : undefined;
  // `supabase secrets set` refuses names starting with SUPABASE_ (and the platform sets no
  // SUPABASE_JWT_SECRET), so a hosted project gives the legacy secret as TIDESYNC_JWT_SECRET.
  const tidesyncSecret = env.TIDESYNC_JWT_SECRET || undefined;
  const supabaseSecret = env.SUPABASE_JWT_SECRET || undefined;
  if (tidesyncSecret && supabaseSecret && tidesyncSecret !== supabaseSecret) {
    throw new Error("TIDESYNC_JWT_SECRET and SUPABASE_JWT_SECRET are both set and differ: set one (TIDESYNC_JWT_SECRET on hosted Supabase)");
  }
  const hsSecret = tidesyncSecret ?? supabaseSecret;
  if (!jwks && !jwksUrl && !hsSecret) {
    throw new Error("No token verification key: set SUPABASE_JWKS, SUPABASE_URL (JWKS endpoint) or TIDESYNC_JWT_SECRET (the legacy HS256 secret; SUPABASE_JWT_SECRET locally)");
  }

  let rateLimits = { ...DEFAULT_RATE_LIMITS };
  if (env.TIDESYNC_RATE_LIMITS) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(env.TIDESYNC_RATE_LIMITS);
    } catch {
      throw new Error("TIDESYNC_RATE_LIMITS must be JSON, e.g. {\"sync.batch\":{\"limit\":120,\"window_seconds\":60}}");
    }
    const result = rateLimitRulesSchema.safeParse(parsed);
    if (!result.success) {
      // A rule's own checks name their operation; a field's bound is named by its path (notifications.limit).
      const messages = result.error.issues.map((i) => i.code === "custom" || i.path.length === 0 ? i.message : `${i.path.join(".")}: ${i.message}`);
      throw new Error(`TIDESYNC_RATE_LIMITS is invalid: ${messages.join("; ")}`);
    }
    rateLimits = mergeRateLimits(result.data);
  }

  const cursorSecret = env.TIDESYNC_CURSOR_SECRET ?? "";
  if (cursorSecret.length < MIN_CURSOR_SECRET_LENGTH) {
    throw new Error(`TIDESYNC_CURSOR_SECRET is required: at least ${MIN_CURSOR_SECRET_LENGTH} random characters that sign sync cursors ` +
      "(e.g. `openssl rand -base64 32`); keep it stable across instances and restarts, or clients must pull from scratch");
  }

  let parsedDbUrl: URL;
  try {
    parsedDbUrl = new URL(dbUrl);
  } catch {
    throw new Error("SUPABASE_DB_URL is not a valid URL");
  }
  if (parsedDbUrl.protocol !== "postgres:" && parsedDbUrl.protocol !== "postgresql:") {
    throw new Error(`SUPABASE_DB_URL must be a postgres:// (or postgresql://) URL, not ${parsedDbUrl.protocol}//`);
  }
  // postgres.js decodes both: a bare % (a password "50%off") stopped the start with "URI malformed",
  // naming no variable. The message never repeats them (the password).
  if (!isPercentEncoded(parsedDbUrl.username) || !isPercentEncoded(parsedDbUrl.password)) {
    throw new Error("SUPABASE_DB_URL: the user name and password must be percent-encoded (a % as %25, @ as %40, : as %3A, / as %2F, # as %23, ? as %3F)");
  }
  const port = parsedDbUrl.port;

  const poolMax = setting(env, "TIDESYNC_DB_POOL_MAX", 10);
  // Exports may hold their connections for minutes: by default a quarter of
  // the pool, and never the whole pool, so the other requests always find a
  // connection (with exports holding every one, each of them waits for one
  // until it answers 503).
  const maxConcurrentExports = setting(env, "TIDESYNC_CONCURRENT_EXPORTS", Math.max(1, Math.floor(poolMax / 4)));
  if (maxConcurrentExports > poolMax - 1) {
    throw new Error(`TIDESYNC_CONCURRENT_EXPORTS (${maxConcurrentExports}) must be below TIDESYNC_DB_POOL_MAX (${poolMax}), and is best well below it: ` +
      "each export holds a connection for its whole download, and the other requests need one");
  }

  return {
    dbUrl,
    db: {
      poolMax,
      maxConcurrentRequests: setting(env, "TIDESYNC_CONCURRENT_REQUESTS", 12),
      maxConcurrentExports,
      connectTimeoutSeconds: setting(env, "TIDESYNC_DB_CONNECT_TIMEOUT_S", 5),
      statementTimeoutMs: setting(env, "TIDESYNC_DB_STATEMENT_TIMEOUT_MS", 8000),
      prepare: booleanSetting(env, "TIDESYNC_DB_PREPARE") ?? port !== "6543",
    },
    auth: { jwks, jwksUrl, hsSecret, issuer: issuerSetting(env.TIDESYNC_JWT_ISSUER) },
    // 20 s: 1 MiB at ~52 KB/s, and an answer before the client's own 30 s request timeout (client/api-client.ts).
    http: { bodyReadTimeoutMs: setting(env, "TIDESYNC_BODY_READ_TIMEOUT_MS", 20_000) },
    limits: loadLimits(env),
    rateLimits,
    cursorSecret,
    deprecations: loadDeprecations(env.TIDESYNC_DEPRECATIONS),
    releases: loadReleaseConfig(env),
  };
}

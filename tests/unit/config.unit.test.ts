// The function's environment → Config: defaults, derived values, and a clear
// start-up error (naming the variable) for anything missing or malformed.
import { generateKeyPairSync } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { exportJWK, generateKeyPair, type JWK } from "jose";
import { loadConfig, loadStartUpConfig, SETTING_RANGES } from "../../functions/api/lib/config.ts";
import { DEFAULT_RATE_LIMITS, RATE_LIMIT_RANGES } from "../../functions/api/lib/rate-limit-rules.ts";
import { RELEASE_SETTING_RANGES } from "../../functions/api/releases/release-config.ts";
import { DEFAULT_LIMITS, LIMIT_RANGES, limitEnvName } from "../../functions/_shared/limits.ts";
import { MAX_TIMER_MS } from "../../functions/_shared/int-setting.ts";
import { CLIENT_TIMEOUT_GRACE_MS } from "../../functions/api/lib/db.ts";
import { createSigningKeys, type SigningKeys } from "../support/signing-keys.ts";

const BASE = {
  SUPABASE_DB_URL: "postgres://postgres:pw@db.example.test:5432/postgres",
  SUPABASE_JWT_SECRET: "legacy-secret",
  TIDESYNC_CURSOR_SECRET: "c".repeat(32),
};
const JWKS = JSON.stringify({ keys: [{ kty: "EC", crv: "P-256", x: "x", y: "y", kid: "k1", alg: "ES256" }] });

describe("loadConfig", () => {
  it("applies the documented defaults", () => {
    const config = loadConfig(BASE);
    expect(config.dbUrl).toBe(BASE.SUPABASE_DB_URL);
    expect(config.db).toEqual({ poolMax: 10, maxConcurrentRequests: 12, maxConcurrentExports: 2, connectTimeoutSeconds: 5, statementTimeoutMs: 8000, prepare: true });
    expect(config.auth).toEqual({ jwks: undefined, jwksUrl: undefined, hsSecret: "legacy-secret", issuer: undefined });
    expect(config.http).toEqual({ bodyReadTimeoutMs: 20_000 });
    expect(config.limits).toEqual(DEFAULT_LIMITS);
    expect(config.rateLimits).toEqual(DEFAULT_RATE_LIMITS);
  });

  // postgres.js decodes the user and password, and a bare % stopped the start with "URI malformed", naming no variable.
  it("refuses a SUPABASE_DB_URL whose user or password is not percent-encoded, naming it and never the password", () => {
    for (const url of ["postgres://u:50%off@db.example.test:5432/postgres", "postgres://50%off:pw@db.example.test:5432/postgres"]) {
      const error = (() => {
        try {
          loadConfig({ ...BASE, SUPABASE_DB_URL: url });
        } catch (error) {
          return error as Error;
        }
      })();
      expect(error?.message).toMatch(/^SUPABASE_DB_URL: .*percent-encoded/);
      expect(error?.message).not.toContain("50%off");
    }
    expect(loadConfig({ ...BASE, SUPABASE_DB_URL: "postgres://u:50%25off@db.example.test:5432/postgres" }).dbUrl).toContain("50%25off");
  });

  it("requires SUPABASE_DB_URL and a valid URL in it", () => {
    expect(() => loadConfig({ ...BASE, SUPABASE_DB_URL: undefined })).toThrow(/SUPABASE_DB_URL is required/);
    expect(() => loadConfig({ ...BASE, SUPABASE_DB_URL: "not a url" })).toThrow(/SUPABASE_DB_URL is not a valid URL/);
    expect(() => loadConfig({ ...BASE, SUPABASE_DB_URL: "mysql://x@127.0.0.1:5432/tidesync" })).toThrow(/SUPABASE_DB_URL must be a postgres:\/\/ .*not mysql:\/\//);
    expect(loadConfig({ ...BASE, SUPABASE_DB_URL: "postgresql://x@127.0.0.1:5432/tidesync" }).dbUrl).toBe("postgresql://x@127.0.0.1:5432/tidesync");
  });

  it("turns prepared statements off behind the transaction pooler (port 6543), unless told otherwise", () => {
    expect(loadConfig({ ...BASE, SUPABASE_DB_URL: "postgres://u@pooler.example.test:6543/postgres" }).db.prepare).toBe(false);
    expect(loadConfig({ ...BASE, TIDESYNC_DB_PREPARE: "false" }).db.prepare).toBe(false);
    expect(loadConfig({ ...BASE, SUPABASE_DB_URL: "postgres://u@pooler.example.test:6543/postgres", TIDESYNC_DB_PREPARE: "true" }).db.prepare).toBe(true);
  });

  it("reads the database tuning variables and refuses non-positive integers", () => {
    const config = loadConfig({ ...BASE, TIDESYNC_DB_POOL_MAX: "3", TIDESYNC_CONCURRENT_REQUESTS: "6", TIDESYNC_DB_CONNECT_TIMEOUT_S: "2", TIDESYNC_DB_STATEMENT_TIMEOUT_MS: "250" });
    expect(config.db).toMatchObject({ poolMax: 3, maxConcurrentRequests: 6, connectTimeoutSeconds: 2, statementTimeoutMs: 250 });
    expect(() => loadConfig({ ...BASE, TIDESYNC_CONCURRENT_REQUESTS: "0" })).toThrow(/TIDESYNC_CONCURRENT_REQUESTS must be a whole number from 1 to/);
    expect(() => loadConfig({ ...BASE, TIDESYNC_DB_POOL_MAX: "0" })).toThrow(/TIDESYNC_DB_POOL_MAX must be a whole number from 2 to/);
    expect(() => loadConfig({ ...BASE, TIDESYNC_DB_STATEMENT_TIMEOUT_MS: "fast" })).toThrow(/TIDESYNC_DB_STATEMENT_TIMEOUT_MS/);
  });

  it("caps concurrent exports at a quarter of the pool by default, and never above the pool (TIDESYNC_CONCURRENT_EXPORTS)", () => {
    expect(loadConfig({ ...BASE, TIDESYNC_DB_POOL_MAX: "3" }).db.maxConcurrentExports).toBe(1);
    expect(loadConfig({ ...BASE, TIDESYNC_DB_POOL_MAX: "40" }).db.maxConcurrentExports).toBe(10);
    expect(loadConfig({ ...BASE, TIDESYNC_CONCURRENT_EXPORTS: "5" }).db.maxConcurrentExports).toBe(5);
    expect(() => loadConfig({ ...BASE, TIDESYNC_CONCURRENT_EXPORTS: "11" })).toThrow(/TIDESYNC_CONCURRENT_EXPORTS \(11\) must be below TIDESYNC_DB_POOL_MAX \(10\)/);
    expect(() => loadConfig({ ...BASE, TIDESYNC_CONCURRENT_EXPORTS: "0" })).toThrow(/TIDESYNC_CONCURRENT_EXPORTS must be a whole number from 1 to/);
  });

  // TIDESYNC_DB_POOL_MAX=1 was taken, and its default export cap was the whole pool: one export to a
  // slow reader, and every other request waited for a connection until it answered 503.
  it("leaves the other requests a connection however many exports stream: the pool is at least 2, exports at most one less", () => {
    expect(() => loadConfig({ ...BASE, TIDESYNC_DB_POOL_MAX: "1" })).toThrow('TIDESYNC_DB_POOL_MAX must be a whole number from 2 to 1000, got "1"');
    expect(loadConfig({ ...BASE, TIDESYNC_DB_POOL_MAX: "2" }).db.maxConcurrentExports).toBe(1);
    expect(loadConfig({ ...BASE, TIDESYNC_CONCURRENT_EXPORTS: "9" }).db.maxConcurrentExports).toBe(9);
    expect(() => loadConfig({ ...BASE, TIDESYNC_CONCURRENT_EXPORTS: "10" }))
      .toThrow(/TIDESYNC_CONCURRENT_EXPORTS \(10\) must be below TIDESYNC_DB_POOL_MAX \(10\)/);
    expect(() => loadConfig({ ...BASE, TIDESYNC_DB_POOL_MAX: "2", TIDESYNC_CONCURRENT_EXPORTS: "2" }))
      .toThrow(/TIDESYNC_CONCURRENT_EXPORTS \(2\) must be below TIDESYNC_DB_POOL_MAX \(2\)/);
    for (let pool = SETTING_RANGES.TIDESYNC_DB_POOL_MAX.min; pool <= 100; pool++) {
      const { maxConcurrentExports } = loadConfig({ ...BASE, TIDESYNC_DB_POOL_MAX: String(pool) }).db;
      expect(maxConcurrentExports, `pool ${pool}`).toBeGreaterThanOrEqual(1);
      expect(maxConcurrentExports, `pool ${pool}`).toBeLessThan(pool);
    }
  });

  it("reads the body read deadline (TIDESYNC_BODY_READ_TIMEOUT_MS) and refuses a non-positive one", () => {
    expect(loadConfig({ ...BASE, TIDESYNC_BODY_READ_TIMEOUT_MS: "1500" }).http.bodyReadTimeoutMs).toBe(1500);
    expect(() => loadConfig({ ...BASE, TIDESYNC_BODY_READ_TIMEOUT_MS: "0" })).toThrow(/TIDESYNC_BODY_READ_TIMEOUT_MS must be a whole number from 1 to/);
  });

  // Each of these started fine and then broke requests: a timer past 2^31-1 ms fires after 1 ms (503),
  // Postgres refuses a timeout past its int on every connection (500 or 503).
  it.each([
    ["TIDESYNC_DB_STATEMENT_TIMEOUT_MS", "1100000000", "1073741823"],
    ["TIDESYNC_DB_STATEMENT_TIMEOUT_MS", "3000000000", "1073741823"],
    ["TIDESYNC_DB_CONNECT_TIMEOUT_S", "2200000", "2147483"],
    ["TIDESYNC_BODY_READ_TIMEOUT_MS", "2147483648", "2147483647"],
    ["TIDESYNC_DB_POOL_MAX", "1000000000", "1000"],
    ["TIDESYNC_CONCURRENT_REQUESTS", "1000000000", "10000"],
  ])("refuses %s=%s, naming the variable and its range (largest %s)", (name, value, max) => {
    const { min } = SETTING_RANGES[name as keyof typeof SETTING_RANGES];
    expect(() => loadConfig({ ...BASE, [name]: value })).toThrow(`${name} must be a whole number from ${min} to ${max}, got "${value}"`);
    expect(loadConfig({ ...BASE, [name]: max })).toBeDefined();
  });

  it("keeps every timeout within what its timer and Postgres take", () => {
    const statement = SETTING_RANGES.TIDESYNC_DB_STATEMENT_TIMEOUT_MS.max;
    expect(statement * 2).toBeLessThanOrEqual(MAX_TIMER_MS); // idle_in_transaction_session_timeout, an int of ms
    expect(statement + CLIENT_TIMEOUT_GRACE_MS).toBeLessThanOrEqual(MAX_TIMER_MS); // the client's bound, a setTimeout
    expect(SETTING_RANGES.TIDESYNC_DB_CONNECT_TIMEOUT_S.max * 1000).toBeLessThanOrEqual(MAX_TIMER_MS); // postgres.js' connect timer
    expect(SETTING_RANGES.TIDESYNC_BODY_READ_TIMEOUT_MS.max).toBeLessThanOrEqual(MAX_TIMER_MS);
  });

  // Digits only (docs/configuration.md): what Number() would also read as a number is refused.
  const NOT_DIGITS = ["1e3", "1.0", "0x10", " ", "12abc", "+10", " 10", "10 ", "-0", "1_000"];

  it.each(NOT_DIGITS)("refuses %j as a number", (value) => {
    expect(() => loadConfig({ ...BASE, TIDESYNC_DB_POOL_MAX: value })).toThrow(/TIDESYNC_DB_POOL_MAX must be a whole number/);
  });

  it.each(NOT_DIGITS)("refuses %j as TIDESYNC_DOWNLOAD_LINK_TTL_S, as every other number", (value) => {
    expect(() => loadConfig({ ...BASE, TIDESYNC_DOWNLOAD_LINK_TTL_S: value })).toThrow(/TIDESYNC_DOWNLOAD_LINK_TTL_S must be a whole number from 1 to 604800/);
  });

  it("reads TIDESYNC_DOWNLOAD_LINK_TTL_S within 1 s to 7 days, 3600 when unset or empty", () => {
    expect(loadConfig(BASE).releases.linkTtlSeconds).toBe(3600);
    expect(loadConfig({ ...BASE, TIDESYNC_DOWNLOAD_LINK_TTL_S: "" }).releases.linkTtlSeconds).toBe(3600);
    expect(loadConfig({ ...BASE, TIDESYNC_DOWNLOAD_LINK_TTL_S: "1" }).releases.linkTtlSeconds).toBe(1);
    expect(loadConfig({ ...BASE, TIDESYNC_DOWNLOAD_LINK_TTL_S: "604800" }).releases.linkTtlSeconds).toBe(604800);
    for (const value of ["0", "604801"]) {
      expect(() => loadConfig({ ...BASE, TIDESYNC_DOWNLOAD_LINK_TTL_S: value }), value).toThrow(/TIDESYNC_DOWNLOAD_LINK_TTL_S must be a whole number from 1 to 604800/);
    }
  });

  it("states every range in docs/configuration.md as the code decides it", () => {
    const doc = readFileSync(path.join(import.meta.dirname, "../../docs/configuration.md"), "utf8");
    const ranges: [string, { min: number; max: number }][] = [
      ...Object.entries(SETTING_RANGES),
      ...Object.entries(RELEASE_SETTING_RANGES),
      ...Object.entries(LIMIT_RANGES).map(([key, range]) => [limitEnvName(key as keyof typeof LIMIT_RANGES), range] as [string, typeof range]),
    ];
    for (const [name, range] of ranges) {
      const row = doc.split("\n").find((line) => line.startsWith(`| \`${name}\` |`));
      expect(row?.split(" | ")[2], name).toBe(`${range.min}–${range.max}`);
    }
    const rateLimits = doc.split("\n").find((line) => line.startsWith("| `TIDESYNC_RATE_LIMITS` |"));
    const { limit, window_seconds } = RATE_LIMIT_RANGES;
    expect(rateLimits?.split(" | ")[2]).toBe(`\`limit\`, \`user_limit\` ${limit.min}–${limit.max}; \`window_seconds\` ${window_seconds.min}–${window_seconds.max}`);
  });

  it("needs at least one way to verify tokens", () => {
    expect(() => loadConfig({ ...BASE, SUPABASE_JWT_SECRET: undefined })).toThrow(/No token verification key/);
    expect(() => loadConfig({ ...BASE, SUPABASE_JWT_SECRET: "" })).toThrow(/No token verification key/);
  });

  it("takes the legacy HS256 secret as TIDESYNC_JWT_SECRET, the name `supabase secrets set` accepts", () => {
    const hosted = { ...BASE, SUPABASE_JWT_SECRET: undefined, TIDESYNC_JWT_SECRET: "hosted-secret" };
    expect(loadConfig(hosted).auth.hsSecret).toBe("hosted-secret");
    expect(loadConfig({ ...hosted, SUPABASE_JWT_SECRET: "hosted-secret" }).auth.hsSecret).toBe("hosted-secret");
    expect(() => loadConfig({ ...hosted, SUPABASE_JWT_SECRET: "another-secret" })).toThrow(/TIDESYNC_JWT_SECRET and SUPABASE_JWT_SECRET are both set and differ/);
    expect(() => loadConfig({ ...hosted, TIDESYNC_JWT_SECRET: "" })).toThrow(/No token verification key: .*TIDESYNC_JWT_SECRET/);
  });

  it("prefers an inline JWKS over the project's JWKS endpoint", () => {
    const config = loadConfig({ ...BASE, SUPABASE_JWKS: JWKS, SUPABASE_URL: "https://abc.supabase.co" });
    expect(config.auth.jwks?.keys[0].kid).toBe("k1");
    expect(config.auth.jwksUrl).toBeUndefined();
  });

  it("derives the JWKS endpoint from SUPABASE_URL (trailing slashes ignored)", () => {
    const config = loadConfig({ ...BASE, SUPABASE_JWT_SECRET: undefined, SUPABASE_URL: "https://abc.supabase.co//" });
    expect(config.auth.jwksUrl).toBe("https://abc.supabase.co/auth/v1/.well-known/jwks.json");
    expect(config.auth.hsSecret).toBeUndefined();
  });

  // "not a url" stopped the function with "Invalid URL: 'not a url/auth/v1/.well-known/jwks.json'", naming no variable.
  it.each(["not a url", "abc.supabase.co", "ftp://abc.supabase.co", "/auth/v1"])("refuses SUPABASE_URL=%j, naming it", (value) => {
    const message = `SUPABASE_URL must be the project's http(s) URL (e.g. https://<ref>.supabase.co), got ${JSON.stringify(value)}`;
    expect(() => loadConfig({ ...BASE, SUPABASE_JWT_SECRET: undefined, SUPABASE_URL: value })).toThrow(message);
    // Also where it serves Supabase Storage only.
    expect(() => loadConfig({ ...BASE, SUPABASE_JWKS: JWKS, SUPABASE_URL: value })).toThrow(message);
  });

  it("refuses a malformed or empty SUPABASE_JWKS", () => {
    expect(() => loadConfig({ ...BASE, SUPABASE_JWKS: "{not json" })).toThrow(/SUPABASE_JWKS must be a JSON Web Key Set/);
    expect(() => loadConfig({ ...BASE, SUPABASE_JWKS: JSON.stringify({ keys: [] }) })).toThrow(/at least one key/);
  });

  it("checks the issuer only when TIDESYNC_JWT_ISSUER is set", () => {
    expect(loadConfig({ ...BASE, TIDESYNC_JWT_ISSUER: "https://abc.supabase.co/auth/v1" }).auth.issuer).toBe("https://abc.supabase.co/auth/v1");
    expect(loadConfig({ ...BASE, TIDESYNC_JWT_ISSUER: "" }).auth.issuer).toBeUndefined();
  });

  // Supabase Auth's iss has no trailing slash: an issuer pasted with one started, then refused every token.
  it("takes TIDESYNC_JWT_ISSUER without its trailing slashes, as SUPABASE_URL", () => {
    expect(loadConfig({ ...BASE, TIDESYNC_JWT_ISSUER: "https://abc.supabase.co/auth/v1/" }).auth.issuer).toBe("https://abc.supabase.co/auth/v1");
  });

  // " " or "foo" started, then refused every token.
  it.each([" ", "foo", "abc.supabase.co/auth/v1", "ftp://abc.supabase.co/auth/v1"])("refuses TIDESYNC_JWT_ISSUER=%j, naming it", (value) => {
    expect(() => loadConfig({ ...BASE, TIDESYNC_JWT_ISSUER: value }))
      .toThrow(`TIDESYNC_JWT_ISSUER must be Supabase Auth's http(s) URL (e.g. https://<ref>.supabase.co/auth/v1), got ${JSON.stringify(value)}`);
  });

  it("merges TIDESYNC_RATE_LIMITS over the defaults and validates it", () => {
    const config = loadConfig({ ...BASE, TIDESYNC_RATE_LIMITS: JSON.stringify({ "sync.batch": { limit: 5, window_seconds: 10 } }) });
    // An override without `per` keeps the operation's default (sync budgets are per session), and its ceiling.
    expect(config.rateLimits["sync.batch"]).toEqual({ limit: 5, window_seconds: 10, per: "session", user_limit: 900 });
    expect(config.rateLimits["sync.pull"]).toEqual(DEFAULT_RATE_LIMITS["sync.pull"]);
    const shared = loadConfig({ ...BASE, TIDESYNC_RATE_LIMITS: JSON.stringify({ "sync.pull": { limit: 9, window_seconds: 60, per: "user" } }) });
    expect(shared.rateLimits["sync.pull"]).toEqual({ limit: 9, window_seconds: 60, per: "user" });
    expect(() => loadConfig({ ...BASE, TIDESYNC_RATE_LIMITS: JSON.stringify({ "sync.pull": { limit: 9, window_seconds: 60, per: "device" } }) }))
      .toThrow(/TIDESYNC_RATE_LIMITS is invalid/);
    expect(() => loadConfig({ ...BASE, TIDESYNC_RATE_LIMITS: "nope" })).toThrow(/TIDESYNC_RATE_LIMITS must be JSON/);
    expect(() => loadConfig({ ...BASE, TIDESYNC_RATE_LIMITS: JSON.stringify({ "sync.batch": { limit: 0, window_seconds: 10 } }) }))
      .toThrow(/TIDESYNC_RATE_LIMITS is invalid/);
    expect(() => loadConfig({ ...BASE, TIDESYNC_RATE_LIMITS: JSON.stringify({ "sync.batch": { limit: 1, window_seconds: 10, burst: 2 } }) }))
      .toThrow(/TIDESYNC_RATE_LIMITS is invalid/);
  });

  // A limit past Postgres' integer started, then answered every request of its operation 500 (22003).
  it("refuses a rate limit the counters cannot hold, naming the operation and the field", () => {
    const load = (overrides: object) => () => loadConfig({ ...BASE, TIDESYNC_RATE_LIMITS: JSON.stringify(overrides) });
    expect(load({ notifications: { limit: 3_000_000_000, window_seconds: 60 } }))
      .toThrow("TIDESYNC_RATE_LIMITS is invalid: notifications.limit: must be at most 2147483647");
    expect(load({ "sync.pull": { limit: 100, window_seconds: 60, user_limit: 5_000_000_000 } }))
      .toThrow("TIDESYNC_RATE_LIMITS is invalid: sync.pull.user_limit: must be at most 2147483647");
    expect(load({ notifications: { limit: 1, window_seconds: 86_401 } }))
      .toThrow("TIDESYNC_RATE_LIMITS is invalid: notifications.window_seconds: must be at most 86400");
    expect(loadConfig({ ...BASE, TIDESYNC_RATE_LIMITS: JSON.stringify({ "sync.pull": { limit: 2147483647, window_seconds: 86400, user_limit: 2147483647 } }) })
      .rateLimits["sync.pull"]).toEqual({ limit: 2147483647, window_seconds: 86400, per: "session", user_limit: 2147483647 });
  });

  // Per-session sync budgets alone let one account spend N budgets with N sessions (and every sign-in
  // adds one), where the contract says per user: the sync budgets also carry a ceiling on the user's
  // total. The budgets a stolen session must not spend for its owner (signing it out, cancelling a
  // deletion) have none.
  it("caps the per-session sync budgets by a user_limit on the user's total; the owner's budgets have none", () => {
    expect(DEFAULT_RATE_LIMITS["sync.pull"]).toEqual({ limit: 600, window_seconds: 60, per: "session", user_limit: 1800 });
    expect(DEFAULT_RATE_LIMITS["sync.batch"]).toEqual({ limit: 300, window_seconds: 60, per: "session", user_limit: 900 });
    for (const operation of ["auth.session", "devices", "account.deletion"]) {
      expect(DEFAULT_RATE_LIMITS[operation].per).toBe("session");
      expect(DEFAULT_RATE_LIMITS[operation]).not.toHaveProperty("user_limit");
    }
  });

  it("merges user_limit: an override keeps the default's unless it sets one, null drops it, per user drops it", () => {
    const rules = (overrides: object) => loadConfig({ ...BASE, TIDESYNC_RATE_LIMITS: JSON.stringify(overrides) }).rateLimits;
    expect(rules({ "sync.batch": { limit: 5, window_seconds: 10 } })["sync.batch"])
      .toEqual({ limit: 5, window_seconds: 10, per: "session", user_limit: 900 });
    expect(rules({ "sync.batch": { limit: 5, window_seconds: 10, user_limit: 12 } })["sync.batch"])
      .toEqual({ limit: 5, window_seconds: 10, per: "session", user_limit: 12 });
    expect(rules({ "sync.batch": { limit: 5, window_seconds: 10, user_limit: null } })["sync.batch"])
      .toEqual({ limit: 5, window_seconds: 10, per: "session" });
    // A session budget without a default ceiling may be given one.
    expect(rules({ "devices": { limit: 5, window_seconds: 10, user_limit: 10 } })["devices"])
      .toEqual({ limit: 5, window_seconds: 10, per: "session", user_limit: 10 });
    // A per-user budget is the user's total already.
    expect(rules({ "sync.pull": { limit: 9, window_seconds: 60, per: "user" } })["sync.pull"])
      .toEqual({ limit: 9, window_seconds: 60, per: "user" });
  });

  it("refuses user_limit on a per-user budget and a ceiling below the session's limit, saying what to set", () => {
    const load = (overrides: object) => () => loadConfig({ ...BASE, TIDESYNC_RATE_LIMITS: JSON.stringify(overrides) });
    const perUser = /TIDESYNC_RATE_LIMITS is invalid: notifications: user_limit needs "per": "session" \(a per-user budget is the user's total already\)/;
    expect(load({ "sync.pull": { limit: 9, window_seconds: 60, per: "user", user_limit: 20 } })).toThrow(/sync\.pull: user_limit needs "per": "session"/);
    // notifications is per user by default.
    expect(load({ "notifications": { limit: 9, window_seconds: 60, user_limit: 20 } })).toThrow(perUser);
    expect(load({ "sync.pull": { limit: 9, window_seconds: 60, user_limit: 0 } })).toThrow(/TIDESYNC_RATE_LIMITS is invalid/);
    expect(load({ "sync.pull": { limit: 9, window_seconds: 60, user_limit: 1.5 } })).toThrow(/TIDESYNC_RATE_LIMITS is invalid/);
    expect(load({ "sync.pull": { limit: 9, window_seconds: 60, user_limit: 8 } }))
      .toThrow(/sync\.pull: user_limit 8 is below limit 9/);
    // A limit raised above the default's ceiling must say what the ceiling becomes.
    expect(load({ "sync.pull": { limit: 5000, window_seconds: 60 } }))
      .toThrow(/sync\.pull: user_limit 1800 \(the default\) is below limit 5000: set a user_limit of at least 5000, or null for none/);
    expect(load({ "sync.pull": { limit: 5000, window_seconds: 60, user_limit: 5000 } })).not.toThrow();
  });

  // "sync.bach" was taken, published by GET /v1/meta and limited nothing.
  it("refuses a rate limit for an operation no route counts, listing the operations", () => {
    for (const name of ["sync.bach", "custom.op", "Sync.Batch", "__proto__", "toString"]) {
      expect(() => loadConfig({ ...BASE, TIDESYNC_RATE_LIMITS: `{${JSON.stringify(name)}:{"limit":1,"window_seconds":60}}` }))
        .toThrow(`TIDESYNC_RATE_LIMITS is invalid: unknown operation ${JSON.stringify(name)}; the operations are ${Object.keys(DEFAULT_RATE_LIMITS).join(", ")}`);
    }
    for (const name of Object.keys(DEFAULT_RATE_LIMITS)) {
      expect(loadConfig({ ...BASE, TIDESYNC_RATE_LIMITS: JSON.stringify({ [name]: { limit: 1, window_seconds: 60 } }) }).rateLimits[name].limit).toBe(1);
    }
  });

  // .env.example listed five of the eight operations and called every budget per user; it now points at
  // docs/configuration.md, whose table is checked here against the code.
  it("documents the rate-limit operations in one place, docs/configuration.md, as the code has them", () => {
    const root = path.join(import.meta.dirname, "../..");
    const lines = readFileSync(path.join(root, ".env.example"), "utf8").split("\n");
    const at = lines.indexOf("TIDESYNC_RATE_LIMITS=");
    let first = at;
    while (lines[first - 1]?.startsWith("#")) first--;
    const comment = lines.slice(first, at).join("\n");
    expect(comment).toMatch(/docs\/configuration\.md/);
    expect(comment).not.toMatch(/per-user/i);
    // Outside its example JSON, the comment names all operations or none.
    const prose = comment.replace(/\{".*?\}\}/g, "");
    const named = Object.keys(DEFAULT_RATE_LIMITS).filter((op) => prose.includes(op));
    expect([0, Object.keys(DEFAULT_RATE_LIMITS).length], `.env.example names only ${named.join(", ")}`).toContain(named.length);
    const doc = readFileSync(path.join(root, "docs/configuration.md"), "utf8");
    const rows = [...doc.matchAll(/^\| `([a-z.]+)` \| .+? \| (\d+) \/ (\d+) s \| (user|session) \| (?:(\d+) \/ \3 s|–) \|$/gm)]
      .map((m) => [m[1], { limit: Number(m[2]), window_seconds: Number(m[3]), per: m[4], ...(m[5] ? { user_limit: Number(m[5]) } : {}) }]);
    expect(Object.fromEntries(rows)).toEqual(DEFAULT_RATE_LIMITS);
  });

  // "yes" and "TRUE" silently meant false.
  it.each(["yes", "TRUE", "True", "1", "on", "no", " true"])("refuses TIDESYNC_DB_PREPARE=%j", (value) => {
    expect(() => loadConfig({ ...BASE, TIDESYNC_DB_PREPARE: value })).toThrow(`TIDESYNC_DB_PREPARE must be true or false (lower case), got ${JSON.stringify(value)}`);
  });

  it("takes an empty TIDESYNC_DB_PREPARE as unset", () => {
    expect(loadConfig({ ...BASE, TIDESYNC_DB_PREPARE: "" }).db.prepare).toBe(true);
  });

  it("passes the limit variables through to the published limits", () => {
    expect(loadConfig({ ...BASE, TIDESYNC_MAX_OPS_PER_BATCH: "3" }).limits.max_ops_per_batch).toBe(3);
    expect(() => loadConfig({ ...BASE, TIDESYNC_MAX_BODY_BYTES: "-5" })).toThrow(/TIDESYNC_MAX_BODY_BYTES/);
  });

  it("declares no deprecation by default; TIDESYNC_DEPRECATIONS adds validated rows", () => {
    expect(loadConfig(BASE).deprecations).toEqual([]);
    const row = { route: "GET /v1/whoami", since: "2026-11-01T00:00:00Z", sunset: "2027-06-01T00:00:00Z", link: "https://example.test/guide" };
    expect(loadConfig({ ...BASE, TIDESYNC_DEPRECATIONS: JSON.stringify([row]) }).deprecations).toEqual([row]);
    expect(() => loadConfig({ ...BASE, TIDESYNC_DEPRECATIONS: "[" })).toThrow(/TIDESYNC_DEPRECATIONS must be a JSON array/);
    expect(() => loadConfig({ ...BASE, TIDESYNC_DEPRECATIONS: JSON.stringify([{ ...row, route: "whoami" }]) })).toThrow(/TIDESYNC_DEPRECATIONS is invalid: 0.route/);
    expect(() => loadConfig({ ...BASE, TIDESYNC_DEPRECATIONS: JSON.stringify([{ ...row, sunset: "soon" }]) })).toThrow(/0.sunset/);
  });
});

// A key set that cannot verify started fine, and then every valid token answered 401 "the access token
// is invalid": jose imports a key on the first token that needs it. Each key is now imported at start-up.
describe("loadStartUpConfig: SUPABASE_JWKS's keys", () => {
  let keys: SigningKeys;
  let publicKey: JWK;
  let rsaPublic: JWK;
  let rsa1024: JWK;
  beforeAll(async () => {
    keys = await createSigningKeys();
    publicKey = keys.publicJwks.keys[0];
    rsaPublic = { ...(await exportJWK((await generateKeyPair("RS256", { extractable: true })).publicKey)), kid: "rsa", alg: "RS256" };
    // jose generates no key this short; an old one may still be pasted.
    rsa1024 = { ...generateKeyPairSync("rsa", { modulusLength: 1024 }).publicKey.export({ format: "jwk" }), kid: "short" } as JWK;
  });
  const start = (jwks: unknown, env: Record<string, string | undefined> = { SUPABASE_JWT_SECRET: undefined }) =>
    loadStartUpConfig({ ...BASE, ...env, SUPABASE_JWKS: JSON.stringify(jwks) });

  it("takes Supabase Auth's public ES256 and RS256 keys", async () => {
    expect((await start({ keys: [publicKey, rsaPublic] })).auth.jwks?.keys).toHaveLength(2);
    expect((await start({ keys: [{ ...publicKey, alg: undefined, use: undefined, key_ops: undefined }] })).auth.jwks?.keys).toHaveLength(1);
  });

  it.each([
    ["a coordinate cut short (a bad paste)", () => ({ ...publicKey, x: String(publicKey.x).slice(0, 20) }), /SUPABASE_JWKS: key 0 \(kid ".+"\) is not an ES256 public key/],
    ["a misspelt kty", () => ({ ...publicKey, kty: "ECC" }), /SUPABASE_JWKS: key 0 \(kid ".+"\) is not a JSON Web Key: its kty is "ECC"/],
    ["no key at all", () => ({ hello: "world" }), /SUPABASE_JWKS: key 0 is not a JSON Web Key/],
    ["the private signing key", () => keys.privateJwk, /SUPABASE_JWKS: key 0 \(kid ".+"\) is a private key \(it has d\)/],
    ["an ES256 key on another curve", () => ({ ...publicKey, crv: "P-384" }), /SUPABASE_JWKS: key 0 .* is not an ES256 public key/],
    ["an RS256 key of 1024 bits", () => rsa1024, /SUPABASE_JWKS: key 0 \(kid "short"\) is a 1024-bit RSA key: RS256 needs at least 2048 bits/],
  ])("refuses %s, naming SUPABASE_JWKS and the key", async (_name, key, message) => {
    await expect(start({ keys: [key(), publicKey] })).rejects.toThrow(message);
    // With a legacy secret besides, as much: the key set's tokens would all be refused.
    await expect(start({ keys: [key()] }, {})).rejects.toThrow(message);
  });

  // The Supabase CLI's SUPABASE_JWKS lists the legacy secret as an oct key, and adds third-party providers' keys.
  it("passes the keys the verifier never tries, but not a key set of only those without a legacy secret", async () => {
    const untried = [
      { kty: "oct", k: "c2VjcmV0" },
      { kty: "OKP", crv: "Ed25519", x: "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo" },
      { ...rsaPublic, kid: "enc", use: "enc" },
    ];
    expect((await start({ keys: [...untried, publicKey] })).auth.jwks?.keys).toHaveLength(4);
    expect((await start({ keys: untried }, {})).auth.hsSecret).toBe("legacy-secret");
    await expect(start({ keys: untried })).rejects.toThrow(/SUPABASE_JWKS holds no ES256 or RS256 public key, and no HS256 secret is set/);
  });
});

// README and docs/configuration.md promise that .env.example lists every variable and the docs
// describe each. The names are what the function's configuration reads: loadConfig run on an
// environment that records each name asked for (every branch: a local store, a signing key),
// and every `env.NAME` / `(env, "NAME")` of functions/, for a branch no environment here takes.
describe("every variable the function reads", () => {
  const ROOT = path.join(import.meta.dirname, "../..");
  /** Read only to be refused unless it says what the database holds: no setting, so a comment in .env.example. */
  const NOT_SETTINGS = ["TIDESYNC_MAX_LIVE_RECORDS_PER_USER"];

  function namesRead(): string[] {
    const names = new Set<string>();
    const branches: Record<string, string>[] = [
      BASE,
      {
        ...BASE,
        TIDESYNC_ARTIFACT_STORE: "local",
        TIDESYNC_LOCAL_STORAGE_URL: "http://127.0.0.1:54321/storage/v1",
        TIDESYNC_LOCAL_STORAGE_SECRET: "s".repeat(32),
        // A key made for this run (loadConfig checks its PEM frame; the key itself is imported at start-up).
        TIDESYNC_EXPO_SIGNING_KEY: generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
      },
    ];
    for (const env of branches) {
      loadConfig(new Proxy(env, {
        get: (target, name) => {
          if (typeof name === "string") names.add(name);
          return Reflect.get(target, name);
        },
      }));
    }
    const sources = readdirSync(path.join(ROOT, "functions"), { recursive: true, encoding: "utf8" }).filter((file) => file.endsWith(".ts"));
    for (const file of sources) {
      const text = readFileSync(path.join(ROOT, "functions", file), "utf8");
      for (const match of text.matchAll(/\benv(?:\.|, ")([A-Z][A-Z0-9_]*)/g)) names.add(match[1]);
    }
    return [...names].sort();
  }

  const names = namesRead();

  it("finds them: the numeric settings, the limits, the secrets and the test-build ones", () => {
    expect(names).toEqual(expect.arrayContaining([
      ...Object.keys(SETTING_RANGES),
      ...Object.keys(LIMIT_RANGES).map((key) => limitEnvName(key as keyof typeof LIMIT_RANGES)),
      ...Object.keys(RELEASE_SETTING_RANGES),
      "SUPABASE_DB_URL", "SUPABASE_JWKS", "TIDESYNC_CURSOR_SECRET", "TIDESYNC_LOCAL_STORAGE_SECRET", "TIDESYNC_EXPO_SIGNING_KEY_ID",
    ]));
  });

  it.each(names)("lists %s in .env.example and docs/configuration.md", (name) => {
    const example = readFileSync(path.join(ROOT, ".env.example"), "utf8");
    const doc = readFileSync(path.join(ROOT, "docs/configuration.md"), "utf8");
    const listed = NOT_SETTINGS.includes(name) ? new RegExp(`^# .*\\b${name}\\b`, "m") : new RegExp(`^${name}=`, "m");
    expect(listed.test(example), `.env.example has no line matching ${listed}`).toBe(true);
    expect(doc.split("\n").some((line) => line.startsWith(`| \`${name}\` |`)), `docs/configuration.md has no row for ${name}`).toBe(true);
  });
});

// A key the signer cannot use started fine, and then every code-signed manifest answered 500 (expo-updates
// hides a failed check: the apps silently got no updates). The key is now imported at start-up.
describe("loadStartUpConfig: TIDESYNC_EXPO_SIGNING_KEY", () => {
  const rsa = generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey;
  const start = (key: string) => loadStartUpConfig({ ...BASE, TIDESYNC_EXPO_SIGNING_KEY: key });

  it("takes an RSA key in PKCS#8 or PKCS#1 PEM (what expo-updates codesigning:generate writes)", async () => {
    for (const type of ["pkcs8", "pkcs1"] as const) {
      const pem = rsa.export({ type, format: "pem" }).toString();
      expect((await start(pem)).releases.expoSigning?.keyId).toBe("main");
    }
  });

  it.each([
    ["an EC key", () => generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey.export({ type: "pkcs8", format: "pem" }).toString()],
    // not a key: three letters in a PEM frame, which the old check took for one
    ["a PEM frame around no key", () => "-----BEGIN PRIVATE KEY-----\nabc\n-----END PRIVATE KEY-----"],
  ])("refuses %s, naming the variable", async (_name, key) => {
    await expect(start(key())).rejects.toThrow(/TIDESYNC_EXPO_SIGNING_KEY: /);
  });
});

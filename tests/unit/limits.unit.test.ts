// The limits of api-v1.md: defaults as the contract states, each overridable by its variable.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { DEFAULT_LIMITS, LIMIT_RANGES, limitEnvName, limitsSchema, loadLimits } from "../../functions/_shared/limits.ts";
import { MAX_LIVE_RECORDS_PER_USER } from "../../functions/_shared/sync-quota.generated.ts";

describe("limits", () => {
  it("defaults to the contract's values", () => {
    expect(loadLimits({})).toEqual({
      max_body_bytes: 1024 * 1024,
      max_ops_per_batch: 500,
      max_record_data_bytes: 64 * 1024,
      default_pull_limit: 500,
      max_pull_limit: 1000,
      max_pull_page_bytes: 4 * 1024 * 1024,
      max_collections_per_pull: 20,
      max_live_records_per_user: 100_000,
      retention_days: 30,
      account_deletion_grace_days: 7,
    });
    expect(limitsSchema.parse(DEFAULT_LIMITS)).toEqual(DEFAULT_LIMITS);
  });

  it("names each variable after its limit", () => {
    expect(limitEnvName("max_ops_per_batch")).toBe("TIDESYNC_MAX_OPS_PER_BATCH");
    expect(limitEnvName("retention_days")).toBe("TIDESYNC_RETENTION_DAYS");
    expect(limitEnvName("account_deletion_grace_days")).toBe("TIDESYNC_ACCOUNT_DELETION_GRACE_DAYS");
  });

  it("takes every override from the environment and ignores empty values", () => {
    const env: Record<string, string> = {};
    for (const key of Object.keys(DEFAULT_LIMITS) as (keyof typeof DEFAULT_LIMITS)[]) {
      if (key !== "max_live_records_per_user") env[limitEnvName(key)] = "7"; // the database's (below)
    }
    env.TIDESYNC_MAX_PULL_LIMIT = "9";
    const limits = loadLimits(env);
    expect(limits.max_body_bytes).toBe(7);
    expect(limits.max_pull_limit).toBe(9);
    expect(loadLimits({ TIDESYNC_MAX_BODY_BYTES: "" }).max_body_bytes).toBe(DEFAULT_LIMITS.max_body_bytes);
  });

  it.each(["0", "-1", "1.5", "ten", "1e400"])("refuses %j as a limit, naming the variable", (value) => {
    expect(() => loadLimits({ TIDESYNC_MAX_OPS_PER_BATCH: value })).toThrow(/TIDESYNC_MAX_OPS_PER_BATCH must be a whole number from 1 to 10000/);
  });

  // A grace period of 3,000,000 days scheduled the purge in year 10240 ("+010240-…", not RFC 3339),
  // one of 3,000,000,000 answered 500; each limit now has a range, and the function refuses to start past it.
  it.each([
    ["TIDESYNC_ACCOUNT_DELETION_GRACE_DAYS", "3000000", "36500"],
    ["TIDESYNC_ACCOUNT_DELETION_GRACE_DAYS", "3000000000", "36500"],
    ["TIDESYNC_RETENTION_DAYS", "36501", "36500"],
    ["TIDESYNC_MAX_PULL_LIMIT", "9007199254740991", "10000"],
    ["TIDESYNC_MAX_BODY_BYTES", "9007199254740991", String(1024 ** 3)],
  ])("refuses %s=%s, naming its range (largest %s)", (name, value, max) => {
    expect(() => loadLimits({ [name]: value })).toThrow(`${name} must be a whole number from 1 to ${max}, got "${value}"`);
  });

  it("gives every limit a variable but the database's quota a range", () => {
    expect(Object.keys(LIMIT_RANGES).sort()).toEqual(Object.keys(DEFAULT_LIMITS).filter((k) => k !== "max_live_records_per_user").sort());
    for (const [key, range] of Object.entries(LIMIT_RANGES)) {
      expect(loadLimits({ [limitEnvName(key as keyof typeof LIMIT_RANGES)]: String(range.max), TIDESYNC_MAX_PULL_LIMIT: "10000" })[key as keyof typeof LIMIT_RANGES]).toBe(range.max);
    }
  });

  it("refuses a default pull size above the maximum", () => {
    expect(() => loadLimits({ TIDESYNC_DEFAULT_PULL_LIMIT: "600", TIDESYNC_MAX_PULL_LIMIT: "500" })).toThrow(/must not exceed/);
  });

  it("does not share state between calls", () => {
    loadLimits({ TIDESYNC_MAX_BODY_BYTES: "5" });
    expect(DEFAULT_LIMITS.max_body_bytes).toBe(1024 * 1024);
    expect(loadLimits({}).max_body_bytes).toBe(1024 * 1024);
  });

  it("keeps the live-records quota in one place: the database's, which no variable can change", () => {
    // app_private.max_live_records_per_user(), copied by npm run generate; the database refuses a write as
    // authenticated over it (pgTAP 127), so a function with another number would publish and plan a quota
    // the Data API does not have.
    expect(DEFAULT_LIMITS.max_live_records_per_user).toBe(MAX_LIVE_RECORDS_PER_USER);
    expect(loadLimits({ TIDESYNC_MAX_LIVE_RECORDS_PER_USER: String(MAX_LIVE_RECORDS_PER_USER) }).max_live_records_per_user).toBe(MAX_LIVE_RECORDS_PER_USER);
    for (const other of ["2", String(MAX_LIVE_RECORDS_PER_USER + 1)]) {
      expect(() => loadLimits({ TIDESYNC_MAX_LIVE_RECORDS_PER_USER: other })).toThrow(/TIDESYNC_MAX_LIVE_RECORDS_PER_USER can no longer change the quota: the database holds it \(app_private\.max_live_records_per_user\(\) = 100000/);
    }
    const dir = path.join(import.meta.dirname, "../../functions");
    const sources = readdirSync(dir, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".ts") && !f.endsWith(".generated.ts"));
    expect(sources.filter((f) => /100_?000\b/.test(readFileSync(path.join(dir, f), "utf8")))).toEqual([]);
  });

  it("keeps the record size limit in one place: the configuration, not the database schema as well", () => {
    // Raised or lowered, the limit is the function's alone (an op over it is rejected per op, see
    // tests/integration/sync-batch.test.ts); a second bound in the schema would turn such an op into a 500.
    expect(loadLimits({ TIDESYNC_MAX_RECORD_DATA_BYTES: String(1024 * 1024) }).max_record_data_bytes).toBe(1024 * 1024);
    const dir = path.join(import.meta.dirname, "../../supabase/migrations");
    const schema = readdirSync(dir).filter((f) => f.endsWith(".sql")).map((f) => readFileSync(path.join(dir, f), "utf8")).join("\n");
    expect(schema).not.toMatch(/65536|64\s*\*\s*1024|max_record_data_bytes|octet_length\(\s*(new\.)?data\b/i);
  });
});

// The bounds of api-v1.md ("Limits"). Defaults here; each can be changed by an
// environment variable of the function, and all are published by GET /v1/meta.
// One is the database's: the live-records quota binds the Data API as much as
// the push, so it lives in app_private.max_live_records_per_user() (generated
// into MAX_LIVE_RECORDS_PER_USER) and no variable can make it differ.
import { z } from "zod";
import { type IntRange, parseIntSetting } from "./int-setting.ts";
import { MAX_LIVE_RECORDS_PER_USER } from "./sync-quota.generated.ts";

export const limitsSchema = z.object({
  max_body_bytes: z.number().int().positive(),
  max_ops_per_batch: z.number().int().positive(),
  max_record_data_bytes: z.number().int().positive()
    .describe("bytes of one record's data as compact UTF-8 JSON (JSON.stringify's text), after the op's patch is merged, without the fields no client writes (insertable and updatable both false: created_by, created_at); an op that leaves it over this and larger than it was is rejected PAYLOAD_TOO_LARGE"),
  default_pull_limit: z.number().int().positive(),
  max_pull_limit: z.number().int().positive(),
  // A default, not required: a client may still talk to a server from before pages were bounded in bytes.
  max_pull_page_bytes: z.number().int().positive().default(4 * 1024 * 1024)
    .describe("bytes of a pull page's entries (their JSON, each with a comma after it) at or beyond which the page ends, whatever `limit` says (has_more true unless nothing comes after its last entry): a page holds at least one entry, and at most this and the one entry that reaches it"),
  max_collections_per_pull: z.number().int().positive(),
  max_live_records_per_user: z.number().int().positive(),
  retention_days: z.number().int().positive(),
  // A default, not required: a client may still talk to a server from before account deletion existed.
  account_deletion_grace_days: z.number().int().positive().default(7)
    .describe("days between POST /v1/users/me/deletion and the purge of the account (cancellable until then)"),
});
export type Limits = z.output<typeof limitsSchema>;

export const DEFAULT_LIMITS: Limits = {
  max_body_bytes: 1024 * 1024,
  max_ops_per_batch: 500,
  max_record_data_bytes: 64 * 1024,
  default_pull_limit: 500,
  max_pull_limit: 1000,
  max_pull_page_bytes: 4 * 1024 * 1024,
  max_collections_per_pull: 20,
  max_live_records_per_user: MAX_LIVE_RECORDS_PER_USER,
  retention_days: 30,
  account_deletion_grace_days: 7,
};

/** The largest number of days a period may be: 100 years keeps every date it makes a four-digit year (RFC 3339). */
export const MAX_DAYS = 36_500;

/**
 * What each limit's variable accepts (docs/configuration.md lists the ranges).
 * A body or record is held in memory whole, and a record's data is one jsonb
 * value (Postgres takes at most 255 MB); a pull page is read and answered at
 * once. The live-records quota is the database's (no variable; see loadLimits).
 */
export const LIMIT_RANGES: Record<Exclude<keyof Limits, "max_live_records_per_user">, IntRange> = {
  max_body_bytes: { min: 1, max: 1024 * 1024 * 1024 },
  max_ops_per_batch: { min: 1, max: 10_000 },
  max_record_data_bytes: { min: 1, max: 100 * 1024 * 1024 },
  default_pull_limit: { min: 1, max: 10_000 },
  max_pull_limit: { min: 1, max: 10_000 },
  max_pull_page_bytes: { min: 1, max: 1024 * 1024 * 1024 },
  max_collections_per_pull: { min: 1, max: 1000 },
  retention_days: { min: 1, max: MAX_DAYS },
  account_deletion_grace_days: { min: 1, max: MAX_DAYS },
};

/** Read only to be refused unless it is the database's number (loadLimits). */
const ANY_COUNT: IntRange = { min: 1, max: Number.MAX_SAFE_INTEGER };

/**
 * Request header bytes (names + values + separators) the function accepts;
 * more → 431 HEADERS_TOO_LARGE. Below the Deno runtime's own limit (about
 * 64 KiB for the whole request head, answered with a bare 400), so a large
 * token gets our envelope. Fixed, not configurable: see docs/errors.md.
 */
export const MAX_REQUEST_HEADER_BYTES = 32 * 1024;

/**
 * How deep a value in a synced record's data may nest arrays and objects (a
 * json or jsonb column's document, an array column's dimensions): a string,
 * number, boolean or null is 0 deep, `[]` and `{}` are 1, `[[1]]` 2. Deeper is
 * that op's rejection (`too_deep`). Checked by an iterative walk
 * (json-value.ts): zod's recursive z.json() ran out of stack on a 3,000-deep
 * value of a 6 KB body, a 500 for the whole batch. Fixed, not configurable,
 * published nowhere else: docs/sync.md ("Limits and their errors").
 */
export const MAX_JSON_DEPTH = 64;

/** Environment variable that overrides each limit, e.g. TIDESYNC_MAX_OPS_PER_BATCH. */
export function limitEnvName(key: keyof Limits): string {
  return `TIDESYNC_${key.toUpperCase()}`;
}

export function loadLimits(env: Record<string, string | undefined>): Limits {
  const limits: Limits = { ...DEFAULT_LIMITS };
  for (const key of Object.keys(DEFAULT_LIMITS) as (keyof Limits)[]) {
    const raw = env[limitEnvName(key)];
    if (raw === undefined || raw === "") continue;
    limits[key] = parseIntSetting(limitEnvName(key), raw, key === "max_live_records_per_user" ? ANY_COUNT : LIMIT_RANGES[key]);
  }
  if (limits.default_pull_limit > limits.max_pull_limit) {
    throw new Error("TIDESYNC_DEFAULT_PULL_LIMIT must not exceed TIDESYNC_MAX_PULL_LIMIT");
  }
  if (limits.max_live_records_per_user !== MAX_LIVE_RECORDS_PER_USER) {
    // The database enforces the quota for every write as `authenticated`; a function with another number
    // would publish and plan one the Data API does not have.
    throw new Error(
      `TIDESYNC_MAX_LIVE_RECORDS_PER_USER can no longer change the quota: the database holds it ` +
        `(app_private.max_live_records_per_user() = ${MAX_LIVE_RECORDS_PER_USER}, for the Data API as for pushes). ` +
        "Unset the variable; to change the quota, replace that function in a migration and run npm run generate (docs/configuration.md)",
    );
  }
  return limits;
}

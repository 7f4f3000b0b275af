// Per-operation request budgets. Fixed windows counted in Postgres
// (app_private.rate_limit_counters), so every function instance shares them.
// A budget belongs to the user (all their sessions together) or to one
// session, i.e. one signed-in device: sync is per session, so a user's phone,
// tablet and laptop each sync within their own budget instead of throttling
// each other; and so are the session, device and deletion routes, so a lost
// phone still signed in cannot spend the budget its owner needs to sign it
// out or to cancel a deletion it asked for.
//
// A per-session budget alone lets one account spend N budgets with N sessions,
// and each sign-in adds one (Supabase Auth allows about 30 sign-ins per 5
// minutes per IP), where the wire contract's 429 is per user. So a per-session
// rule may also carry user_limit: a ceiling on the user's total across all
// their sessions, in the same window (rate-limit.ts counts both in one
// statement; a request its session's own budget refuses spends none of it).
import { z } from "zod";
import type { IntRange } from "../../_shared/int-setting.ts";

/**
 * What a rule's numbers may be (docs/configuration.md states them): rate-limit.ts passes the limits
 * and the window to Postgres as integers, so a larger one started fine and then answered every
 * request of its operation 500 (22003); a window is at most a day.
 */
export const RATE_LIMIT_RANGES = {
  limit: { min: 1, max: 2 ** 31 - 1 },
  window_seconds: { min: 1, max: 86_400 },
} as const satisfies Record<string, IntRange>;

const count = ({ min, max }: IntRange) =>
  z.number().int().min(min, { error: `must be at least ${min}` }).max(max, { error: `must be at most ${max}` });

export const rateLimitRuleSchema = z.strictObject({
  limit: count(RATE_LIMIT_RANGES.limit),
  window_seconds: count(RATE_LIMIT_RANGES.window_seconds),
  per: z.enum(["user", "session"]).optional()
    .describe("whose budget: the user's across all their sessions, or each session's (device's) own; default: the operation's default, else user"),
  user_limit: count(RATE_LIMIT_RANGES.limit).nullable().optional()
    .describe("per session only: a ceiling on the user's total across all their sessions in the same window; null: none; default: the operation's default"),
});
export interface RateLimitRule {
  limit: number;
  window_seconds: number;
  per: "user" | "session";
  /** Per-session rules only: the most requests all the user's sessions together make in a window. */
  user_limit?: number;
}

/** Defaults sized for a phone syncing in bursts; override with TIDESYNC_RATE_LIMITS. Every operation a route counts is here. */
export const DEFAULT_RATE_LIMITS: Record<string, RateLimitRule> = {
  // No user_limit on these three, on purpose: a thief's (or a lost phone's) session must not be able
  // to spend the budget its owner needs to revoke it (DELETE /v1/devices/{id}, DELETE
  // /v1/auth/session) or to cancel a deletion it asked for; each session keeps its own.
  "auth.session": { limit: 60, window_seconds: 60, per: "session" },
  "devices": { limit: 120, window_seconds: 60, per: "session" },
  "notifications": { limit: 120, window_seconds: 60, per: "user" },
  // The user's sync total is capped at 3 sessions' worth: three devices syncing flat out at once
  // (a phone, a tablet, a laptop) never meet it, while more sessions no longer mean more sync.
  "sync.pull": { limit: 600, window_seconds: 60, per: "session", user_limit: 1800 },
  "sync.batch": { limit: 300, window_seconds: 60, per: "session", user_limit: 900 },
  "releases": { limit: 120, window_seconds: 60, per: "user" },
  "account.deletion": { limit: 30, window_seconds: 60, per: "session" },
  // An export reads everything the user has: a few per hour is what a person needs.
  "account.export": { limit: 3, window_seconds: 3600, per: "user" },
};

type RuleOverride = z.infer<typeof rateLimitRuleSchema>;

/** The operation's default with `rule` merged in: field by field; user_limit null drops the ceiling, and a per-user rule has none. */
function mergeRule(operation: string, rule: RuleOverride): RateLimitRule {
  const base = DEFAULT_RATE_LIMITS[operation];
  const per = rule.per ?? base.per;
  const userLimit = rule.user_limit === undefined ? (per === base.per ? base.user_limit : undefined) : rule.user_limit;
  const merged: RateLimitRule = { limit: rule.limit, window_seconds: rule.window_seconds, per };
  if (userLimit != null && per === "session") merged.user_limit = userLimit;
  return merged;
}

/**
 * TIDESYNC_RATE_LIMITS: rules for operations of DEFAULT_RATE_LIMITS only. A
 * name no route counts (a typo such as "sync.bach") would be published by
 * GET /v1/meta and limit nothing, so it is refused with the list of names.
 */
export const rateLimitRulesSchema = z.preprocess((value, ctx) => {
  // The raw keys: a record schema drops "__proto__" silently.
  if (typeof value !== "object" || value === null || Array.isArray(value)) return value;
  for (const operation of Object.keys(value)) {
    if (Object.hasOwn(DEFAULT_RATE_LIMITS, operation)) continue;
    ctx.addIssue({
      code: "custom",
      path: [operation],
      message: `unknown operation ${JSON.stringify(operation)}; the operations are ${Object.keys(DEFAULT_RATE_LIMITS).join(", ")}`,
    });
  }
  return value;
}, z.record(z.string(), rateLimitRuleSchema).superRefine((overrides, ctx) => {
  for (const [operation, rule] of Object.entries(overrides)) {
    if (!Object.hasOwn(DEFAULT_RATE_LIMITS, operation)) continue;
    const per = rule.per ?? DEFAULT_RATE_LIMITS[operation].per;
    if (rule.user_limit != null && per === "user") {
      ctx.addIssue({
        code: "custom",
        path: [operation, "user_limit"],
        message: `${operation}: user_limit needs "per": "session" (a per-user budget is the user's total already)`,
      });
      continue;
    }
    const { limit, user_limit } = mergeRule(operation, rule);
    if (user_limit !== undefined && user_limit < limit) {
      // A ceiling below one session's budget would make that budget mean nothing; the default's,
      // kept silently under a raised limit, would cut every session to it.
      const which = rule.user_limit === undefined ? `user_limit ${user_limit} (the default)` : `user_limit ${user_limit}`;
      ctx.addIssue({
        code: "custom",
        path: [operation, "user_limit"],
        message: `${operation}: ${which} is below limit ${limit}: set a user_limit of at least ${limit}, or null for none`,
      });
    }
  }
}));

/**
 * The defaults with `overrides` merged in, field by field: an override without `per` keeps the
 * default's, one without `user_limit` the default's ceiling (unless it makes the budget per user),
 * and `user_limit: null` drops it.
 */
export function mergeRateLimits(overrides: z.infer<typeof rateLimitRulesSchema>): Record<string, RateLimitRule> {
  const rules = { ...DEFAULT_RATE_LIMITS };
  for (const [operation, rule] of Object.entries(overrides)) rules[operation] = mergeRule(operation, rule);
  return rules;
}

// Per-operation request budgets. Fixed windows counted in Postgres
// (app_private.rate_limit_counters), so every function instance shares them.
// A budget belongs to the user (all their sessions together) or to one
// session, i.e. one signed-in device: sync is per session, so a user's phone,
// tablet and laptop each sync within their own budget instead of throttling
// each other; and so are the session, device and deletion routes, so a lost
// phone still signed in cannot spend the budget its owner needs to sign it
// out or to cancel a deletion it asked for.
import { z } from "zod";

export const rateLimitRuleSchema = z.strictObject({
  limit: z.number().int().positive(),
  window_seconds: z.number().int().positive().max(86_400),
  per: z.enum(["user", "session"]).optional()
    .describe("whose budget: the user's across all their sessions, or each session's (device's) own; default: the operation's default, else user"),
});
export type RateLimitRule = Required<z.infer<typeof rateLimitRuleSchema>>;

/** Defaults sized for a phone syncing in bursts; override with TIDESYNC_RATE_LIMITS. Every operation a route counts is here. */
export const DEFAULT_RATE_LIMITS: Record<string, RateLimitRule> = {
  "auth.session": { limit: 60, window_seconds: 60, per: "session" },
  "devices": { limit: 120, window_seconds: 60, per: "session" },
  "notifications": { limit: 120, window_seconds: 60, per: "user" },
  "sync.pull": { limit: 600, window_seconds: 60, per: "session" },
  "sync.batch": { limit: 300, window_seconds: 60, per: "session" },
  "releases": { limit: 120, window_seconds: 60, per: "user" },
  "account.deletion": { limit: 30, window_seconds: 60, per: "session" },
  // An export reads everything the user has: a few per hour is what a person needs.
  "account.export": { limit: 3, window_seconds: 3600, per: "user" },
};

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
}, z.record(z.string(), rateLimitRuleSchema));

/** The defaults with `overrides` merged in, field by field (an override without `per` keeps the default's). */
export function mergeRateLimits(overrides: z.infer<typeof rateLimitRulesSchema>): Record<string, RateLimitRule> {
  const rules = { ...DEFAULT_RATE_LIMITS };
  for (const [operation, rule] of Object.entries(overrides)) {
    rules[operation] = { per: DEFAULT_RATE_LIMITS[operation].per, ...rule } as RateLimitRule;
  }
  return rules;
}

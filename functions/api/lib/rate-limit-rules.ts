// Per-user, per-operation request budgets. Fixed windows counted in Postgres
// (app_private.rate_limit_counters), so every function instance shares them.
import { z } from "zod";

export const rateLimitRuleSchema = z.strictObject({
  limit: z.number().int().positive(),
  window_seconds: z.number().int().positive().max(86_400),
});
export type RateLimitRule = z.infer<typeof rateLimitRuleSchema>;
export const rateLimitRulesSchema = z.record(z.string().regex(/^[a-z][a-z0-9_.]*$/), rateLimitRuleSchema);

/** Defaults sized for a phone syncing in bursts; override with TIDESYNC_RATE_LIMITS. */
export const DEFAULT_RATE_LIMITS: Record<string, RateLimitRule> = {
  "auth.session": { limit: 60, window_seconds: 60 },
  "devices": { limit: 120, window_seconds: 60 },
  "notifications": { limit: 120, window_seconds: 60 },
  "sync.pull": { limit: 600, window_seconds: 60 },
  "sync.batch": { limit: 300, window_seconds: 60 },
  "account.deletion": { limit: 30, window_seconds: 60 },
  // An export reads everything the user has: a few per hour is what a person needs.
  "account.export": { limit: 3, window_seconds: 3600 },
};

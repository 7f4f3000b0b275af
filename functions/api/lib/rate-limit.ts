// Consumes one unit of the caller's budget for an operation. The counter lives
// in Postgres so it holds across every function instance; it is written in its
// own short statement (not the request transaction) so that requests which
// fail still count.
import { ApiError } from "../../_shared/errors.ts";
import { type Db, isDatabaseUnavailable, unavailable } from "./db.ts";
import type { RateLimitRule } from "./rate-limit-rules.ts";

const FOREIGN_KEY_VIOLATION = "23503";

export interface RateLimitState {
  headers: Record<string, string>;
}

export async function consumeRateLimit(db: Db, userId: string, operation: string, rule: RateLimitRule): Promise<RateLimitState> {
  let row: { hits: number; reset_seconds: number } | undefined;
  try {
    [row] = await db.sql<{ hits: number; reset_seconds: number }[]>`
      select hits, reset_seconds
      from app_private.hit_rate_limit(${userId}::uuid, ${operation}, ${rule.window_seconds})`;
  } catch (error) {
    if (isDatabaseUnavailable(error)) throw unavailable(error);
    // The counter references auth.users: a validly signed token of a user who
    // has since been deleted (their sessions with them) is signed out.
    if ((error as { code?: unknown }).code === FOREIGN_KEY_VIOLATION) {
      throw new ApiError("UNAUTHENTICATED", "this session has been signed out; sign in again");
    }
    throw error;
  }
  // A connection terminated under the statement can end it without a row (seen when the
  // database kills backends): that is the database being unavailable, not a bug of the request.
  if (!row) throw unavailable(new Error("the rate-limit counter answered no row"));
  const remaining = Math.max(0, rule.limit - row.hits);
  const headers = {
    "RateLimit-Limit": String(rule.limit),
    "RateLimit-Remaining": String(remaining),
    "RateLimit-Reset": String(row.reset_seconds),
    "RateLimit-Policy": `${rule.limit};w=${rule.window_seconds}`,
  };
  if (row.hits > rule.limit) {
    throw new ApiError("RATE_LIMITED", `too many ${operation} requests; retry in ${row.reset_seconds} s`, {
      headers: { ...headers, "Retry-After": String(row.reset_seconds) },
    });
  }
  return { headers };
}

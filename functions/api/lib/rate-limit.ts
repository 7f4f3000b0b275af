// Consumes one unit of the caller's budget for an operation (the user's, or
// the calling session's when the rule is per session). The counter lives
// in Postgres so it holds across every function instance; it is written in its
// own short statement (not the request transaction) so that requests which
// fail still count. Only a session whose standing the request's use accepts
// (db.ts, SessionUse) spends budget: the same statement checks it first, so a
// signed-out or stolen-and-revoked token gets 401 (the password step of an MFA
// user's sign-in 403, unless it signs itself out) and can never exhaust its
// owner's budget. It also reads the database's clock:
// the request's server_time where no statement of its own answers one.
import { ApiError } from "../../_shared/errors.ts";
import {
  acceptedStanding,
  type Db,
  sessionRefusal,
  type SessionStanding,
  sessionStanding,
  type SessionUse,
  signedOut,
  signedOutIfGone,
  unavailable,
} from "./db.ts";
import type { RateLimitRule } from "./rate-limit-rules.ts";
import { wireNow } from "../sync/wire-time.ts";
import type { UserClaims } from "./verify-token.ts";

export interface RateLimitState {
  headers: Record<string, string>;
  /** The database's now() at this statement, in the wire format (sync/wire-time.ts). */
  serverTime: string;
}

interface Admission {
  standing: SessionStanding;
  hit: { hits: number; reset_seconds: number } | null;
  server_time: string;
}

export async function consumeRateLimit(
  db: Db,
  claims: UserClaims,
  operation: string,
  rule: RateLimitRule,
  use: SessionUse = "act",
): Promise<RateLimitState> {
  // CASE evaluates the counter's subquery only when the standing is accepted. The
  // counter references auth.users: a user deleted between the two checks of
  // this statement is signed out too.
  const [admission] = await db.query((sql) =>
    sql<Admission[]>`
      select standing,
             case when ${acceptedStanding(sql, use)} then (
               select json_build_object('hits', h.hits, 'reset_seconds', h.reset_seconds)
               from app_private.hit_rate_limit(${claims.sub}::uuid, ${operation}, ${rule.window_seconds},
                                               ${rule.per === "session" ? claims.session_id : null}::uuid) h
             ) end as hit,
             ${wireNow(sql)} as server_time
      from (select ${sessionStanding(sql, claims)} as standing) session`
      .catch(async (error) => {
        throw await signedOutIfGone(sql, claims, error, use);
      })
  );
  // A connection terminated under the statement can end it without a row (seen when the
  // database kills backends): that is the database being unavailable, not a bug of the request.
  if (!admission) throw unavailable(new Error("the rate-limit admission answered no row"));
  const refusal = sessionRefusal(admission.standing, use);
  if (refusal) throw refusal;
  if (!admission.hit) throw signedOut();
  const row = admission.hit;
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
  return { headers, serverTime: admission.server_time };
}

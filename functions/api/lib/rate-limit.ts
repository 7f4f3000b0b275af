// Consumes one unit of the caller's budget for an operation (the user's, or
// the calling session's when the rule is per session, and then also the
// user's total across their sessions when the rule has a user_limit; a request
// its session's own budget refuses spends none of the user's total, so one
// runaway device spends at most its own budget of it). The counter lives
// in Postgres so it holds across every function instance; it is written in its
// own short statement (not the request transaction) so that requests which
// fail still count. Only a session whose standing the request's use accepts
// (db.ts, SessionUse) spends budget: the same statement checks it first, so a
// signed-out or stolen-and-revoked token gets 401 (the password step of an MFA
// user's sign-in 403, unless it signs itself out) and can never exhaust its
// owner's budget. It also reads the database's clock (the request's
// server_time where no statement of its own answers one) and the session's
// assurance level (auth.sessions.aal, the caller's aal).
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
import type { AssuranceLevel, UserClaims } from "./verify-token.ts";

export interface RateLimitState {
  headers: Record<string, string>;
  /** The database's now() at this statement, in the wire format (sync/wire-time.ts). */
  serverTime: string;
  /** The session's assurance level at this statement (its auth.sessions row, not the token's claim). */
  aal: AssuranceLevel;
}

interface Hit {
  hits: number;
  reset_seconds: number;
}

interface Admission {
  standing: SessionStanding;
  /** The rule's own budget; `user`: the user's total, counted when the rule has a user_limit and the own budget was not over. */
  hit: (Hit & { user: Hit | null }) | null;
  /** Read, as the hit is, only for an accepted standing. */
  aal: AssuranceLevel | null;
  server_time: string;
}

interface Budget {
  limit: number;
  hit: Hit;
}

export async function consumeRateLimit(
  db: Db,
  claims: UserClaims,
  operation: string,
  rule: RateLimitRule,
  use: SessionUse = "act",
): Promise<RateLimitState> {
  // CASE evaluates the counter's subquery only when the standing is accepted, and the user's
  // total (its nil-session counter, the key a per-user budget uses) only when the session's own
  // budget is not over. The counter references auth.users: a user deleted between the two checks
  // of this statement is signed out too. `offset 0` keeps the standing's subquery whole: flattened,
  // every use of `standing` would call session_standing() (the session check) again. The aal is
  // that of the row session_standing() found (one more primary-key probe, no round trip of its
  // own); null is aal1, as session_standing() reads it.
  const userLimit = rule.per === "session" ? rule.user_limit ?? null : null;
  const [admission] = await db.query((sql) =>
    sql<Admission[]>`
      select standing,
             case when ${acceptedStanding(sql, use)} then (
               select json_build_object('hits', h.hits, 'reset_seconds', h.reset_seconds, 'user',
                        case when ${userLimit}::integer is not null and h.hits <= ${rule.limit}::integer then (
                          select json_build_object('hits', u.hits, 'reset_seconds', u.reset_seconds)
                          from app_private.hit_rate_limit(${claims.sub}::uuid, ${operation}, ${rule.window_seconds}) u
                        ) end)
               from app_private.hit_rate_limit(${claims.sub}::uuid, ${operation}, ${rule.window_seconds},
                                               ${rule.per === "session" ? claims.session_id : null}::uuid) h
             ) end as hit,
             case when ${acceptedStanding(sql, use)} then (
               select coalesce(s.aal::text, 'aal1') from auth.sessions s where s.id = ${claims.session_id}::uuid
             ) end as aal,
             ${wireNow(sql)} as server_time
      from (select ${sessionStanding(sql, claims)} as standing offset 0) session`
      .catch(async (error) => {
        throw await signedOutIfGone(sql, claims, error, use);
      })
  );
  // A connection terminated under the statement can end it without a row (seen when the
  // database kills backends): that is the database being unavailable, not a bug of the request.
  if (!admission) throw unavailable(new Error("the rate-limit admission answered no row"));
  const refusal = sessionRefusal(admission.standing, use);
  if (refusal) throw refusal;
  // Either read finding nothing for an accepted standing: the session or its user went meanwhile.
  if (!admission.hit || !admission.aal) throw signedOut();
  const budgets: Budget[] = [{ limit: rule.limit, hit: admission.hit }];
  if (userLimit !== null && admission.hit.user) budgets.push({ limit: userLimit, hit: admission.hit.user });
  // The headers tell the binding budget: the one over (only one can be: the user's total is not
  // counted past the session's own), else the one with the fewer requests left (the session's on a
  // tie; both windows are the same). The policy lists every budget the rule has, the session's first.
  const remainingOf = ({ limit, hit }: Budget) => Math.max(0, limit - hit.hits);
  const over = budgets.find(({ limit, hit }) => hit.hits > limit);
  const binding = over ?? budgets.reduce((a, b) => remainingOf(b) < remainingOf(a) ? b : a);
  const policies = userLimit === null ? [rule.limit] : [rule.limit, userLimit];
  const headers = {
    "RateLimit-Limit": String(binding.limit),
    "RateLimit-Remaining": String(remainingOf(binding)),
    "RateLimit-Reset": String(binding.hit.reset_seconds),
    "RateLimit-Policy": policies.map((limit) => `${limit};w=${rule.window_seconds}`).join(", "),
  };
  if (over) {
    const whose = over === budgets[0] ? "" : " from all your sessions together";
    throw new ApiError("RATE_LIMITED", `too many ${operation} requests${whose}; retry in ${over.hit.reset_seconds} s`, {
      headers: { ...headers, "Retry-After": String(over.hit.reset_seconds) },
    });
  }
  return { headers, serverTime: admission.server_time, aal: admission.aal };
}

// One postgres.js pool per function worker. User work runs in a transaction
// that switches to role `authenticated` with the verified claims, exactly as
// PostgREST does, so the RLS policies decide what the caller can see and change.
import postgres from "postgres";
import { ApiError } from "../../_shared/errors.ts";
import type { Config } from "./config.ts";
import type { UserClaims } from "./verify-token.ts";

export type Sql = postgres.Sql;
export type Tx = postgres.TransactionSql;

export interface Db {
  sql: Sql;
  /** Runs `work` as the caller under RLS; refuses a token whose session was revoked. */
  withUser<T>(claims: UserClaims, work: (tx: Tx) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

// SQLSTATEs that mean "the database could not serve this now" rather than "bad request".
const UNAVAILABLE_SQLSTATES = new Set(["57014", "57P01", "57P02", "57P03", "53300", "53400", "40001", "40P01", "55P03"]);
const UNAVAILABLE_CLIENT_CODES = new Set([
  "CONNECT_TIMEOUT",
  "CONNECTION_CLOSED",
  "CONNECTION_ENDED",
  "CONNECTION_DESTROYED",
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENOTFOUND",
  "EPIPE",
]);

export function isDatabaseUnavailable(error: unknown): boolean {
  if (typeof error !== "object" || error === null) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code !== "string") return /connect|connection|timed out|refused/i.test(String((error as { message?: unknown }).message ?? ""));
  return UNAVAILABLE_SQLSTATES.has(code) || code.startsWith("08") || UNAVAILABLE_CLIENT_CODES.has(code);
}

export function unavailable(cause: unknown): ApiError {
  return new ApiError("UNAVAILABLE", "the database is unavailable or too slow right now; retry shortly", {
    headers: { "Retry-After": "2" },
    cause,
  });
}

export function createDb(config: Config): Db {
  const sql = postgres(config.dbUrl, {
    max: config.db.poolMax,
    connect_timeout: config.db.connectTimeoutSeconds,
    idle_timeout: 60,
    max_lifetime: 30 * 60,
    prepare: config.db.prepare,
    onnotice: () => {},
    connection: {
      application_name: "tidesync-api",
      // One clock format everywhere: column values of synced rows print in UTC.
      TimeZone: "UTC",
      statement_timeout: config.db.statementTimeoutMs,
      idle_in_transaction_session_timeout: config.db.statementTimeoutMs * 2,
    },
  });

  async function withUser<T>(claims: UserClaims, work: (tx: Tx) => Promise<T>): Promise<T> {
    try {
      return await sql.begin(async (tx) => {
        // Privileges are checked when the statement starts, as the connection's
        // role, so the session lookup may read auth.sessions; the role switch
        // takes effect for every later statement of this transaction.
        const [state] = await tx<{ live: boolean }[]>`
          select
            exists (
              select 1 from auth.sessions s
              where s.id = ${claims.session_id}::uuid
                and s.user_id = ${claims.sub}::uuid
                and (s.not_after is null or s.not_after > now())
            ) as live,
            set_config('request.jwt.claims', ${JSON.stringify(claims)}, true),
            set_config('role', 'authenticated', true)`;
        if (!state.live) throw new ApiError("UNAUTHENTICATED", "this session has been signed out; sign in again");
        return await work(tx);
      }) as T;
    } catch (error) {
      if (error instanceof ApiError) throw error;
      if (isDatabaseUnavailable(error)) throw unavailable(error);
      throw error;
    }
  }

  return { sql, withUser, close: () => sql.end({ timeout: 5 }) };
}

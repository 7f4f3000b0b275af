// One postgres.js pool per function worker. User work runs in a transaction
// that switches to role `authenticated` with the verified claims, exactly as
// PostgREST does, so the RLS policies decide what the caller can see and change.
import postgres from "postgres";
import { ApiError } from "../../_shared/errors.ts";
import type { Config } from "./config.ts";
import type { UserClaims } from "./verify-token.ts";

export type Sql = postgres.Sql;
export type Tx = postgres.TransactionSql;

export interface WorkOptions {
  /**
   * How long this unit of work may run when that is longer than one statement
   * may (an export streaming to a slow reader, whose cursor statement stays
   * active while the reader catches up). withUser raises the transaction's own
   * statement_timeout and idle_in_transaction_session_timeout to it (SET LOCAL),
   * so the server cuts it off at this limit, not at the pool's statement
   * timeout; the client gives up CLIENT_TIMEOUT_GRACE_MS later, as for any work.
   */
  timeLimitMs?: number;
  /**
   * Called once the session check has passed (withUser), while the work may
   * still run: a response that streams the work's output starts then, and a
   * signed-out session still gets its 401 before any byte.
   */
  onLive?: () => void;
  /**
   * Every statement of the work reads one snapshot (REPEATABLE READ, read
   * only): a document assembled from many statements (the export) is
   * consistent with itself.
   */
  snapshot?: boolean;
  /** What the work does with the caller's session: `act` unless said (SessionUse). */
  use?: SessionUse;
}

export interface Db {
  /** Runs `work` on the pool as the connection's role, within the client-side bound. */
  query<T>(work: (sql: Sql) => Promise<T>, options?: WorkOptions): Promise<T>;
  /** Runs `work` as the caller under RLS; refuses a token whose session is not live. */
  withUser<T>(claims: UserClaims, work: (tx: Tx) => Promise<T>, options?: WorkOptions): Promise<T>;
  /** Runs `work` as role anon (a caller without a token) under RLS. */
  asAnon<T>(work: (tx: Tx) => Promise<T>): Promise<T>;
  /**
   * Runs `work` as the release manager: role service_role with the service
   * key's claims. Only for a request whose Standard Webhooks signature was
   * verified (CI publishing releases); its grants are the release tables'.
   */
  asReleaseManager<T>(work: (tx: Tx) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/**
 * How long past the server's statement_timeout the client waits for a unit of
 * database work before it gives up itself: a frozen or unreachable server
 * cannot cancel anything, so without this bound a request would hang.
 */
export const CLIENT_TIMEOUT_GRACE_MS = 1000;

class ClientTimeout extends Error {
  readonly code = "CLIENT_TIMEOUT";
  constructor(ms: number) {
    super(`no answer from the database within ${ms} ms`);
  }
}

/**
 * What this token's session may do, by the database's one rule,
 * app_private.session_standing() (migration 20261128003350): 'live'; or
 * 'signed_out' (its row is gone or has ended, or the user is banned or
 * deleted, as Supabase Auth applies it); or 'aal2_required' (aal1 while the
 * user has a verified MFA factor). GET /v1/devices and the push senders' view
 * read the same rule (app_private.session_is_live(): standing = 'live').
 */
export type SessionStanding = "live" | "signed_out" | "aal2_required";

/**
 * What a request does with its session: act as its user (`act`: every route
 * but one), or end that very session (`sign_out`: DELETE /v1/auth/session).
 * A session acts only while 'live'. It ends itself at 'aal2_required' too, as
 * Supabase Auth's own logout does at aal1: the password step of an MFA
 * sign-in left unfinished on a device can be signed out there (its refresh
 * token revoked). Signing any other session out (DELETE /v1/devices/{id}) is
 * acting.
 */
export type SessionUse = "act" | "sign_out";

/** The standings each use accepts: the one place the rule above is written. */
export const ACCEPTED_STANDINGS: Record<SessionUse, readonly SessionStanding[]> = {
  act: ["live"],
  sign_out: ["live", "aal2_required"],
};

/**
 * ACCEPTED_STANDINGS[use] as SQL: whether `standing` (a column of the statement) is accepted. The
 * standings are this module's constants, written as literals: no parameter to bind or parse per
 * statement (for `act`, `standing in ('live')`, which Postgres plans as `standing = 'live'`).
 */
const ACCEPTED_STANDING_SQL = Object.fromEntries(
  Object.entries(ACCEPTED_STANDINGS).map(([use, standings]) => [use, `standing in (${standings.map((s) => `'${s}'`).join(", ")})`]),
) as Record<SessionUse, string>;

export function acceptedStanding(q: Sql | Tx, use: SessionUse) {
  return q.unsafe(ACCEPTED_STANDING_SQL[use]);
}

export function sessionStanding(q: Sql | Tx, claims: Pick<UserClaims, "sub" | "session_id">) {
  return q`app_private.session_standing(${claims.session_id}::uuid, ${claims.sub}::uuid)`;
}

/**
 * The answer to a session whose standing `use` does not accept (none when it
 * does): 401, or 403 for the password step of an MFA user's sign-in.
 */
export function sessionRefusal(standing: SessionStanding, use: SessionUse = "act"): ApiError | undefined {
  if (ACCEPTED_STANDINGS[use].includes(standing)) return undefined;
  return standing === "aal2_required" ? new Aal2Required() : signedOut();
}

/** `tx`, refusing to start any further statement with the error `refusal()` returns, once it returns one. */
function refusingWhen(tx: Tx, refusal: () => Error | undefined): Tx {
  const check = () => {
    const error = refusal();
    if (error) throw error;
  };
  return new Proxy(tx, {
    apply(target, thisArg, args) {
      check();
      return Reflect.apply(target, thisArg, args);
    },
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (property !== "unsafe" && property !== "savepoint" && property !== "file") return value;
      return (...args: unknown[]) => {
        check();
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

export function signedOut(): ApiError {
  return new ApiError("UNAUTHENTICATED", "this session has been signed out; sign in again");
}

/**
 * A session at aal1 of a user with a verified MFA factor: signed in, but it
 * reaches nothing until Supabase Auth verifies the second factor (mfa.verify)
 * and raises it to aal2; a refresh after that carries aal2. 403: the token is
 * valid and signing in again does not help.
 */
export class Aal2Required extends ApiError {
  constructor() {
    super("FORBIDDEN", "complete multi-factor sign-in (aal2): this account has a verified MFA factor and this session signed in with one factor only");
  }
}

const FOREIGN_KEY_VIOLATION = "23503";

/**
 * What a failed statement of the caller stands for. A write that references the
 * caller's session or user (devices.session_id, every user_id) waits for a
 * sign-out or account deletion that commits after the session check, then
 * fails its foreign key: that is this session signed out (401), not a bug.
 * The session is checked again to tell it from any other foreign-key failure,
 * which stays what it was.
 */
export async function signedOutIfGone(
  sql: Sql,
  claims: Pick<UserClaims, "sub" | "session_id">,
  error: unknown,
  use?: SessionUse,
): Promise<unknown> {
  if ((error as { code?: unknown } | null)?.code !== FOREIGN_KEY_VIOLATION) return error;
  const [{ standing }] = await sql<{ standing: SessionStanding }[]>`select ${sessionStanding(sql, claims)} as standing`;
  return sessionRefusal(standing, use) ?? error;
}

/**
 * Client-side codes of postgres.js (and the socket under it) for a connection that has closed or
 * is closing: nothing more can be sent on it.
 */
const CONNECTION_LOST_CODES = new Set(["CONNECTION_CLOSED", "CONNECTION_ENDED", "CONNECTION_DESTROYED", "ECONNRESET", "ETIMEDOUT", "EPIPE"]);

/**
 * Whether `error` means the connection it came from is gone: closed under it, or a FATAL (or
 * PANIC) error from the server, which always ends the session (pg_terminate_backend's 57P01, a
 * session timeout). A PostgresError carries the message's severity.
 */
function isConnectionLost(error: unknown): boolean {
  if (typeof error !== "object" || error === null) return false;
  const { code, severity } = error as { code?: unknown; severity?: unknown };
  return (typeof code === "string" && CONNECTION_LOST_CODES.has(code)) || severity === "FATAL" || severity === "PANIC";
}

// SQLSTATEs that mean "the database could not serve this now" rather than "bad request".
// 25006 (read_only_sql_transaction): the database takes no writes for now (Supabase's
// read-only mode on a full disk, a standby after a failover); a signed-in request writes
// its rate-limit counter first, so even a read meets it.
const UNAVAILABLE_SQLSTATES = new Set(["57014", "57P01", "57P02", "57P03", "53300", "53400", "40001", "40P01", "55P03", "25006"]);
const UNAVAILABLE_CLIENT_CODES = new Set([...CONNECTION_LOST_CODES, "CONNECT_TIMEOUT", "ECONNREFUSED", "EHOSTUNREACH", "ENOTFOUND"]);

/**
 * Whether the database refused the function's login: class 28 (an unknown role, a wrong
 * password) or 3D000 (no such database). A setting to fix (SUPABASE_DB_URL), or a password
 * being rotated: no request can be served until then, so it is answered as unavailable.
 */
export function isLoginRefused(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && (code.startsWith("28") || code === "3D000");
}

export function isDatabaseUnavailable(error: unknown): boolean {
  if (typeof error !== "object" || error === null) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code !== "string") return /connect|connection|timed out|refused/i.test(String((error as { message?: unknown }).message ?? ""));
  return UNAVAILABLE_SQLSTATES.has(code) || code.startsWith("08") || UNAVAILABLE_CLIENT_CODES.has(code) || isLoginRefused(error);
}

/**
 * Whether `error` is a deadlock's victim (40P01), as thrown by a unit of work (unavailable(), the
 * database's error as its cause): Postgres rolled its whole transaction back.
 */
export function isDeadlockVictim(error: unknown): boolean {
  const cause = error instanceof ApiError ? error.cause : error;
  return (cause as { code?: unknown } | null)?.code === "40P01";
}

export function unavailable(cause: unknown): ApiError {
  return new ApiError("UNAVAILABLE", "the database is unavailable or too slow right now; retry shortly", {
    headers: { "Retry-After": "2" },
    cause,
  });
}

/**
 * What the client-side bound knows of one unit of database work, so that when
 * it fires it ends that work alone.
 */
interface Unit {
  /** The bound has fired: the work starts no further statement and commits nothing. */
  abandoned?: ClientTimeout;
  /** The server process of the unit's transaction, while its callback runs (pg_backend_pid()). */
  pid?: number;
  /** Settles once the bound's clean-up of this unit is over (never rejects). */
  ended?: Promise<void>;
  /** The clean-up ends the transaction's server process (its pid was known): its connection is lost. */
  endsBackend?: boolean;
}

export function createDb(config: Config): Db {
  const open = (max: number) => postgres(config.dbUrl, {
    max,
    connect_timeout: config.db.connectTimeoutSeconds,
    idle_timeout: 60,
    max_lifetime: 30 * 60,
    prepare: config.db.prepare,
    // postgres.js (3.4.9) runs a pg_type query first on every new connection to learn the
    // array types (fetch_types) and drops that query's promise: a backend ended while it
    // runs (a failover, pg_terminate_backend) is an unhandled rejection outside any request
    // (porsager/postgres#1192, #1223). No statement here reads an array column as one or
    // binds a JS array (lists travel as text, pg-array.ts), so the query buys nothing.
    fetch_types: false,
    onnotice: () => {},
    connection: {
      application_name: "tidesync-api",
      // One clock format everywhere: column values of synced rows print in UTC.
      TimeZone: "UTC",
      statement_timeout: config.db.statementTimeoutMs,
      idle_in_transaction_session_timeout: config.db.statementTimeoutMs * 2,
    },
  });
  let pool = open(config.db.poolMax);
  // One connection of its own, opened when a bound first fires, to end the
  // transaction that passed it: the pool's may all be busy.
  let control: Sql | undefined;
  const boundMs = config.db.statementTimeoutMs + CLIENT_TIMEOUT_GRACE_MS;

  /**
   * After a unit's bound fired: ends its transaction, if it has one, from the
   * control connection (pg_terminate_backend: it rolls back and its connection
   * closes; the pool opens another when needed), or else asks the database for
   * any answer at all. Only when the database does not answer within
   * CLIENT_TIMEOUT_GRACE_MS (frozen, partitioned) is the pool replaced, its
   * connections destroyed, so no later request inherits one stuck mid-protocol
   * and stuck connections cannot pile up. Other requests' transactions on a
   * database that answers are left alone.
   */
  async function endAbandoned(current: Sql, pid: number | undefined): Promise<void> {
    const sql = control ??= open(1);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const answered = await Promise.race([
      // Waits (up to half the grace) until the process has gone, so the
      // connection cannot be handed to another request before it dies.
      (pid === undefined ? sql`select 1` : sql`select pg_terminate_backend(${pid}, ${CLIENT_TIMEOUT_GRACE_MS / 2})`)
        .then(() => true, (error) => (error as { name?: unknown } | null)?.name === "PostgresError"),
      new Promise<boolean>((resolve) => timer = setTimeout(resolve, CLIENT_TIMEOUT_GRACE_MS, false)),
    ]);
    clearTimeout(timer);
    if (answered) return;
    if (pool === current) {
      pool = open(config.db.poolMax);
      current.end({ timeout: 0 }).catch(() => {});
    }
    if (control === sql) {
      control = undefined;
      sql.end({ timeout: 0 }).catch(() => {});
    }
  }

  // Every unit of database work races the client-side bound; when the bound
  // wins, the caller is answered at once and endAbandoned cleans up behind it.
  async function run<T>(work: (sql: Sql, unit: Unit) => Promise<T>, options: WorkOptions = {}): Promise<T> {
    const current = pool;
    const unit: Unit = {};
    const ms = options.timeLimitMs === undefined ? boundMs : options.timeLimitMs + CLIENT_TIMEOUT_GRACE_MS;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const bound = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        unit.abandoned = new ClientTimeout(ms);
        unit.endsBackend = unit.pid !== undefined;
        unit.ended = endAbandoned(current, unit.pid);
        reject(unit.abandoned);
      }, ms);
    });
    try {
      return await Promise.race([work(current, unit), bound]);
    } catch (error) {
      if (error instanceof ApiError) throw error;
      if (error instanceof ClientTimeout || isDatabaseUnavailable(error)) throw unavailable(error);
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * sql.begin for a unit: a transaction whose connection reaches it only after
   * its bound does nothing, and one whose bound fires while its callback runs
   * commits nothing and keeps its connection (so no other request gets it)
   * until endAbandoned has ended it. `body` sets unit.pid from its first answer.
   *
   * A transaction whose connection is lost (closed under it, a FATAL error, its
   * backend ended by endAbandoned) starts no further statement, and its callback
   * never settles. postgres.js (3.4.9) rejects begin() as soon as the connection
   * closes but lets the callback run on, and sends ROLLBACK (or COMMIT) on that
   * connection once it settles: with the socket gone, the write, deferred to a
   * setImmediate, throws outside any request ("Cannot read properties of null
   * (reading 'write')", porsager/postgres#1208) and leaves the connection unable
   * to connect again (every reconnect ends in CONNECT_TIMEOUT); reconnected
   * meanwhile for another request, the statement would run in that request's
   * session. The server has rolled the transaction back already, and the caller
   * has begin()'s rejection.
   */
  function transaction<T>(sql: Sql, unit: Unit, mode: string, body: (tx: Tx) => Promise<T>): Promise<T> {
    let running = false;
    let lost: Error | undefined;
    const begun = sql.begin(mode, async (tx) => {
      running = true;
      let outcome: { ok: true; value: T } | { ok: false; error: unknown };
      try {
        if (unit.abandoned) throw unit.abandoned;
        const value = await body(refusingWhen(tx, () => unit.abandoned ?? lost));
        if (unit.abandoned) throw unit.abandoned;
        outcome = { ok: true, value };
      } catch (error) {
        if (isConnectionLost(error)) lost ??= error as Error;
        outcome = { ok: false, error };
      } finally {
        if (unit.abandoned) await unit.ended;
        unit.pid = undefined;
      }
      running = false;
      // A promise of its own each time: nothing references it, so the pending
      // callback, and postgres.js's transaction scope awaiting it, are garbage.
      if (lost || unit.endsBackend) return await new Promise<never>(() => {});
      if (!outcome.ok) throw outcome.error;
      return outcome.value;
    }) as Promise<T>;
    // Rejected while the callback runs: the connection closed (the only way
    // postgres.js settles begin() before the callback has).
    begun.catch((error) => {
      if (running) lost ??= error;
    });
    return begun;
  }

  function withUser<T>(claims: UserClaims, work: (tx: Tx) => Promise<T>, options?: WorkOptions): Promise<T> {
    const limit = options?.timeLimitMs === undefined ? undefined : String(options.timeLimitMs);
    return run((sql, unit) =>
      transaction(sql, unit, options?.snapshot ? "isolation level repeatable read read only" : "", async (tx) => {
        // Privileges are checked when the statement starts, as the connection's
        // role, so the session lookup may read auth.sessions; the role switch
        // takes effect for every later statement of this transaction, and so
        // do the timeouts of a work with a time limit of its own. A live
        // session is marked for the transaction (tidesync.live_session): the
        // policies, which check the session of every Data API statement
        // (app_private.live_uid()), take this check for the whole request. A
        // sign-out accepted at 'aal2_required' is not marked: the policies
        // still refuse it, and revoke_session (security definer) needs no mark.
        const state = tx<{ standing: SessionStanding; pid: number }[]>`
          select
            checked.standing,
            pg_backend_pid() as pid,
            set_config('tidesync.live_session', case when checked.standing = 'live' then ${claims.session_id} else '' end, true),
            set_config('request.jwt.claims', ${JSON.stringify(claims)}, true),
            set_config('role', 'authenticated', true)
            ${limit === undefined ? tx`` : tx`,
            set_config('statement_timeout', ${limit}, true),
            set_config('idle_in_transaction_session_timeout', ${limit}, true)`}
          from (select ${sessionStanding(tx, claims)} as standing offset 0) checked`.execute();
        // The work's first statements travel in the same round trip (pipelined
        // behind the check, as the caller under RLS). Its answer arrives first:
        // a signed-out session refuses every later statement, nothing the work
        // did is kept (the transaction rolls back) and none of it is answered.
        let refused = false;
        const outcome = work(refusingWhen(tx, () => refused ? signedOut() : undefined));
        outcome.catch(() => {}); // settled below in both cases
        const [{ standing, pid }] = await state.catch(async (error) => {
          refused = true;
          await outcome.catch(() => {});
          throw error;
        });
        unit.pid = pid;
        const refusal = sessionRefusal(standing, options?.use);
        if (refusal) {
          refused = true;
          await outcome.catch(() => {});
          throw refusal;
        }
        options?.onLive?.();
        return await outcome;
      }).catch(async (error) => {
        throw await signedOutIfGone(sql, claims, error, options?.use);
      }), options);
  }

  // A role without a user session to check: the claims Supabase's keys carry.
  function withRole<T>(role: "anon" | "service_role", work: (tx: Tx) => Promise<T>): Promise<T> {
    return run((sql, unit) =>
      transaction(sql, unit, "", async (tx) => {
        [{ pid: unit.pid }] = await tx<{ pid: number }[]>`
          select pg_backend_pid() as pid,
                 set_config('request.jwt.claims', ${JSON.stringify({ iss: "supabase", role })}, true),
                 set_config('role', ${role}, true)`;
        return await work(tx);
      }));
  }

  return {
    query: (work, options) => run((sql) => work(sql), options),
    withUser,
    asAnon: (work) => withRole("anon", work),
    asReleaseManager: (work) => withRole("service_role", work),
    close: async () => {
      await Promise.all([pool.end({ timeout: 5 }), control?.end({ timeout: 5 })]);
    },
  };
}

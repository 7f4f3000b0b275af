// The one form every sync timestamp takes on the wire: ISO-8601, UTC,
// microseconds, "Z". Formatted in SQL, so the session's TimeZone never matters
// and push results and pulled changes print the same instant identically.
// Every `server_time` of the API is the database's now() in this form
// (docs/errors.md, "server_time"): one clock, one format.
import type { Sql, Tx } from "../lib/db.ts";

export const WIRE_TIME_FORMAT = 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"';

/** SQL text formatting `column` (a timestamptz expression) for the wire. */
export const wireTimeSql = (column: string) => `to_char(${column} at time zone 'UTC', '${WIRE_TIME_FORMAT}')`;

/**
 * The database's now() for the wire, as a fragment of a postgres.js tagged
 * statement (`sql`/`tx`): the server_time of an answer, read in a statement
 * the request runs anyway, so it costs no round trip.
 */
export const wireNow = (sql: Sql | Tx) => sql.unsafe(wireTimeSql("now()"));

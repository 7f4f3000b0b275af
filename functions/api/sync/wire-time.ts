// The one form every sync timestamp takes on the wire: ISO-8601, UTC,
// microseconds, "Z". Formatted in SQL, so the session's TimeZone never matters
// and push results and pulled changes print the same instant identically.
export const WIRE_TIME_FORMAT = 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"';

/** SQL text formatting `column` (a timestamptz expression) for the wire. */
export const wireTimeSql = (column: string) => `to_char(${column} at time zone 'UTC', '${WIRE_TIME_FORMAT}')`;

// The server_time of every response (docs/errors.md, "server_time"): one
// clock, the database's, and one format, the sync wire's
// (functions/api/sync/wire-time.ts formats it in SQL).
import { z } from "zod";

/**
 * Read tolerantly (any ISO 8601 date-time with an offset, any fraction of a
 * second): a client also reads a server from before, which answered some
 * server_time in milliseconds from the function's own clock.
 */
export const serverTimeSchema = z.string().datetime({ offset: true }).describe(
  "the database's clock (its now()) when the answer was made, the clock of the times the database stores (updated_at, " +
    "last_seen_at, requested_at, …); ISO 8601 in UTC with microseconds, e.g. 2026-11-26T10:00:00.123456Z; the same in every response",
);

// Temporary databases for test runs and generators: created on the machine's
// Postgres (TEST_DATABASE_URL, a superuser connection), set up exactly as a
// real one (stand-in, `supabase db push` as the non-superuser owner role,
// seed), and dropped afterwards, also on Ctrl-C.
import { randomBytes } from "node:crypto";
import { dropDatabase, provisionDatabase, setupDatabase, withDatabase } from "../db/database.ts";
import { onShutdown } from "./shutdown.ts";

/** Superuser connection to the machine's Postgres; runs create and drop their own databases there. */
// Empty counts as unset, as .env.example says ("empty means use the default").
export const TEST_ADMIN_URL = process.env.TEST_DATABASE_URL || "postgres://postgres@127.0.0.1:5432/postgres";

export interface TempDatabase {
  name: string;
  /** Superuser URL of the database (stand-in, pgTAP, fixtures). */
  adminDbUrl: string;
  /** URL of the owner role (hosted `postgres`); migrations ran as it. */
  ownerDbUrl: string;
  /** Drops the database (idempotent). */
  drop(): Promise<void>;
}

export function temporaryDatabaseName(prefix: string): string {
  return `${prefix}_${randomBytes(4).toString("hex")}`;
}

/** A database as `db:setup` leaves it; dropped by `drop()` or when the process is interrupted. */
export async function createTempDatabase(prefix: string, options: { seed: boolean; adminUrl?: string }): Promise<TempDatabase> {
  const adminUrl = options.adminUrl ?? TEST_ADMIN_URL;
  const name = temporaryDatabaseName(prefix);
  let dropped = false;
  const dropNow = async () => {
    if (dropped) return;
    dropped = true;
    await dropDatabase(adminUrl, name);
  };
  const drop = onShutdown(dropNow);
  try {
    const ownerDbUrl = await provisionDatabase(adminUrl, name, { recreate: true });
    const adminDbUrl = withDatabase(adminUrl, name);
    await setupDatabase({ adminUrl: adminDbUrl, migrationUrl: ownerDbUrl, seed: options.seed ? "always" : "never" });
    return { name, adminDbUrl, ownerDbUrl, drop };
  } catch (error) {
    await drop();
    throw error;
  }
}

// A SQLite file for one test, opened as often as the test needs: the same
// device after a restart, or an app and its background task on one store.
// `closeSqliteFiles` (in afterEach) closes every connection and removes the files.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { SqliteStorage } from "../storage-sqlite.ts";
import { type BetterSqliteDriver, betterSqliteDriver } from "./better-sqlite3-driver.ts";

const dirs: string[] = [];
const drivers: BetterSqliteDriver[] = [];

/** A new file; each call of the function it resolves with opens another store on it. */
export async function sqliteFile(): Promise<() => SqliteStorage> {
  const dir = await mkdtemp(path.join(tmpdir(), "tidesync-sqlite-"));
  dirs.push(dir);
  return () => {
    const driver = betterSqliteDriver(path.join(dir, "tidesync.db"));
    drivers.push(driver);
    return new SqliteStorage(driver);
  };
}

export async function closeSqliteFiles(): Promise<void> {
  for (const driver of drivers.splice(0)) driver.close();
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
}

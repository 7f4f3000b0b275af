// better-sqlite3 (a real SQLite, in Node) wrapped to the SqliteDatabase
// interface client/storage-sqlite.ts is written against: what expo-sqlite and
// op-sqlite offer on a device. For the client's tests; `hooks.afterRun` lets a
// test stop a write between two of its statements (a crash, a full disk).
import Database from "better-sqlite3";
import type { SqlValue, SqliteDatabase } from "../storage-sqlite.ts";

export interface DriverHooks {
  /** Called after each `run` statement (with its SQL), inside the transaction when there is one. */
  afterRun?: (sql: string) => void;
}

export interface BetterSqliteDriver extends SqliteDatabase {
  readonly raw: Database.Database;
  close(): void;
}

export function betterSqliteDriver(file: string, hooks: DriverHooks = {}): BetterSqliteDriver {
  const raw = new Database(file);
  // What expo-sqlite and op-sqlite use by default: a write-ahead log.
  raw.pragma("journal_mode = WAL");
  raw.pragma("synchronous = FULL");
  return {
    raw,
    close: () => raw.close(),
    async execute(sql) {
      raw.exec(sql);
    },
    async run(sql, params: readonly SqlValue[] = []) {
      const { changes } = raw.prepare(sql).run(...params);
      hooks.afterRun?.(sql);
      return { changes };
    },
    async getAll<Row>(sql: string, params: readonly SqlValue[] = []) {
      return raw.prepare(sql).all(...params) as Row[];
    },
    async transaction(work) {
      raw.exec("begin immediate");
      try {
        await work();
        raw.exec("commit");
      } catch (error) {
        raw.exec("rollback");
        throw error;
      }
    },
  };
}

// SyncStorage on SQLite, for devices with more records than fit in memory
// (tested with 100,000). Written against the small async interface that
// expo-sqlite and op-sqlite both offer (client/README.md shows the few lines
// that adapt each, and client/test/better-sqlite3-driver.ts adapts
// better-sqlite3 for Node), so one implementation serves every platform.
//
// Layout (four tables, named with a prefix so they sit beside the app's own):
//   <p>records  (collection, id) → the record as JSON, its version, and `listed`:
//                the mark of a running full sync (see SyncStorage.unlistedRecords)
//   <p>outbox   the pending ops in order (an autoincrement seq keeps it)
//   <p>notices  events a client with no listener could not tell, in order (a background task's),
//                until a client with listeners delivers them
//   <p>meta     the cursor, the running full sync (beside its `listed` marks), the collections filter
//                of their cursors, the schema, the owner (a user id) and its account,
//                the format version, the revision (raised by
//                every apply: an app and its background task may share the file,
//                each with a client; see SyncStorage.revision)
// Every apply() is one transaction, with the outbox written first: a crash
// anywhere in it leaves the store as it was, so an op acknowledged by the
// server is never removed from the outbox without its record being stored
// (and a lost write only makes the client resend the same op_id).
import type { SyncRecord } from "../functions/_shared/schemas/sync.ts";
import { isUuid } from "../functions/_shared/uuid.ts";
import {
  type DeviceState,
  type PendingOp,
  pullPosition,
  type RecordRef,
  type RunningReset,
  samePosition,
  type ServerSchema,
  StaleStoreError,
  type StorageChange,
  type StoredNotice,
  type SyncStorage,
} from "./storage.ts";

export type SqlValue = string | number | null;

/**
 * What SQLite must offer: the subset expo-sqlite (`execAsync`, `runAsync`,
 * `getAllAsync`) and op-sqlite (`execute`) share. One connection; statements
 * run in call order.
 */
export interface SqliteDatabase {
  /** Runs statements that take no parameters and return no rows (the schema). */
  execute(sql: string): Promise<void>;
  /** Runs one statement with parameters; `changes`: the rows it inserted, updated or deleted. */
  run(sql: string, params?: readonly SqlValue[]): Promise<{ changes: number }>;
  /** Every row one query returns, as objects keyed by column name. */
  getAll<Row>(sql: string, params?: readonly SqlValue[]): Promise<Row[]>;
  /** Runs `work` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction(work: () => Promise<void>): Promise<void>;
}

export interface SqliteStorageOptions {
  /** Prefix of the four tables (default "tidesync_"): letters, digits and underscores. */
  tablePrefix?: string;
}

const FORMAT_VERSION = "1";
/** Ids per `in (…)` list: far below SQLite's smallest bound on parameters (999). */
const CHUNK = 400;

function chunks<T>(items: readonly T[], size = CHUNK): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

const placeholders = (n: number) => Array.from({ length: n }, () => "?").join(", ");

/** A table prefix of the user's own (`tidesync_<user id without dashes>_`): one store per user on a shared device. */
export function userTablePrefix(userId: string): string {
  if (!isUuid(userId)) throw new TypeError("userId must be a uuid");
  return `tidesync_${userId.toLowerCase().replaceAll("-", "")}_`;
}

export class SqliteStorage implements SyncStorage {
  private readonly records: string;
  private readonly outbox: string;
  private readonly meta: string;
  private readonly notices: string;
  private ready: Promise<void> | null = null;
  /** Transactions one after another (one connection cannot nest them). */
  private queue: Promise<void> = Promise.resolve();

  constructor(private readonly db: SqliteDatabase, options: SqliteStorageOptions = {}) {
    const prefix = options.tablePrefix ?? "tidesync_";
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(prefix)) throw new TypeError("tablePrefix must be letters, digits and underscores");
    this.records = `${prefix}records`;
    this.outbox = `${prefix}outbox`;
    this.meta = `${prefix}meta`;
    this.notices = `${prefix}notices`;
  }

  /** Creates the tables on first use (idempotent). */
  private init(): Promise<void> {
    this.ready ??= (async () => {
      await this.db.execute(`
        create table if not exists ${this.records} (
          collection text not null,
          id text not null,
          version integer not null,
          body text not null,
          listed integer not null default 0,
          primary key (collection, id)
        ) without rowid;
        create index if not exists ${this.records}_unlisted on ${this.records} (collection) where listed = 0;
        create table if not exists ${this.outbox} (
          seq integer primary key autoincrement,
          op_id text not null unique,
          body text not null
        );
        create table if not exists ${this.notices} (
          seq integer primary key autoincrement,
          id text not null unique,
          body text not null
        );
        create table if not exists ${this.meta} (key text primary key, value text not null);`);
      const [format] = await this.db.getAll<{ value: string }>(`select value from ${this.meta} where key = 'format'`);
      if (format && format.value !== FORMAT_VERSION) throw new Error(`${this.meta}: unknown store format ${format.value}`);
      if (!format) await this.db.run(`insert into ${this.meta} (key, value) values ('format', ?)`, [FORMAT_VERSION]);
    })();
    return this.ready;
  }

  async loadState(): Promise<DeviceState> {
    // The revision first: a write landing between the reads makes it look older than what was read, never newer.
    const revision = await this.revision();
    const ops = await this.db.getAll<{ body: string }>(`select body from ${this.outbox} order by seq`);
    const notices = await this.db.getAll<{ body: string }>(`select body from ${this.notices} order by seq`);
    const meta = new Map((await this.db.getAll<{ key: string; value: string }>(`select key, value from ${this.meta}`)).map((r) => [r.key, r.value]));
    const cursor = meta.get("cursor");
    const schema = meta.get("schema");
    const owner = meta.get("owner");
    const ownerAccount = meta.get("owner_account");
    const pullCollections = meta.get("pull_collections");
    const reset = JSON.parse(meta.get("reset") ?? "null") as RunningReset | null;
    return {
      outbox: ops.map((row) => JSON.parse(row.body) as PendingOp),
      cursor: cursor === undefined ? null : (JSON.parse(cursor) as string | null),
      ...(pullCollections === undefined ? {} : { pullCollections: JSON.parse(pullCollections) as string[] | null }),
      schema: schema === undefined ? null : (JSON.parse(schema) as ServerSchema | null),
      ...(owner === undefined ? {} : { owner: JSON.parse(owner) as string }),
      ...(ownerAccount === undefined ? {} : { ownerAccount: JSON.parse(ownerAccount) as string }),
      ...(reset ? { reset } : {}),
      ...(notices.length > 0 ? { notices: notices.map((row) => JSON.parse(row.body) as StoredNotice) } : {}),
      revision,
    };
  }

  /** One primary-key read: the client calls it before each state change. */
  async revision(): Promise<number> {
    await this.init();
    const [row] = await this.db.getAll<{ value: string }>(`select value from ${this.meta} where key = 'revision'`);
    return row ? Number(row.value) : 0;
  }

  async getRecords(refs: readonly RecordRef[]): Promise<SyncRecord[]> {
    await this.init();
    const byCollection = new Map<string, string[]>();
    for (const { collection, id } of refs) {
      const ids = byCollection.get(collection);
      if (ids) ids.push(id);
      else byCollection.set(collection, [id]);
    }
    const found: SyncRecord[] = [];
    for (const [collection, ids] of byCollection) {
      for (const part of chunks([...new Set(ids)])) {
        const rows = await this.db.getAll<{ body: string }>(
          `select body from ${this.records} where collection = ? and id in (${placeholders(part.length)})`, [collection, ...part]);
        for (const row of rows) found.push(JSON.parse(row.body) as SyncRecord);
      }
    }
    return found;
  }

  async listRecords(collection: string | null, after: RecordRef | null, limit: number): Promise<SyncRecord[]> {
    await this.init();
    const rows = collection === null
      ? await this.db.getAll<{ body: string }>(
        `select body from ${this.records} where (collection, id) > (?, ?) order by collection, id limit ?`,
        [after?.collection ?? "", after?.id ?? "", limit])
      : await this.db.getAll<{ body: string }>(
        `select body from ${this.records} where collection = ? and id > ? order by id limit ?`,
        [collection, after !== null && after.collection === collection ? after.id : "", limit]);
    return rows.map((row) => JSON.parse(row.body) as SyncRecord);
  }

  async unlistedRecords(collections: readonly string[] | null, limit: number): Promise<RecordRef[]> {
    await this.init();
    const scope = collections === null ? "" : `and collection in (${placeholders(collections.length)})`;
    return await this.db.getAll<RecordRef>(
      `select collection, id from ${this.records} where listed = 0 ${scope} limit ?`, [...(collections ?? []), limit]);
  }

  apply(change: StorageChange): Promise<void> {
    const write = this.queue.then(async () => {
      await this.init();
      await this.db.transaction(() => this.write(change));
    });
    this.queue = write.catch(() => {});
    return write;
  }

  /** The statements of one change, in the transaction apply() opened. The outbox goes first. */
  private async write(change: StorageChange): Promise<void> {
    const { db } = this;
    // Inside the transaction (which holds the write lock), so no other writer moves it before the commit.
    const [row] = await db.getAll<{ value: string }>(`select value from ${this.meta} where key = 'revision'`);
    const revision = row ? Number(row.value) : 0;
    if (change.ifRevision !== undefined && change.ifRevision !== revision) throw new StaleStoreError();
    if (change.ifPull && !samePosition(await this.position(), change.ifPull)) throw new StaleStoreError();
    await this.putMeta("revision", String(revision + 1));
    for (const part of chunks(change.deleteOps ?? [])) {
      await db.run(`delete from ${this.outbox} where op_id in (${placeholders(part.length)})`, part);
    }
    for (const pending of change.putOps ?? []) {
      // A replaced op keeps its seq (its place); a new one goes last.
      const body = JSON.stringify(pending);
      const { changes } = await db.run(`update ${this.outbox} set body = ? where op_id = ?`, [body, pending.op.op_id]);
      if (changes === 0) await db.run(`insert into ${this.outbox} (op_id, body) values (?, ?)`, [pending.op.op_id, body]);
    }
    if (change.beginReset) await db.run(`update ${this.records} set listed = 0 where listed <> 0`);
    for (const { collection, id } of change.deleteRecords ?? []) {
      await db.run(`delete from ${this.records} where collection = ? and id = ?`, [collection, id]);
    }
    for (const record of change.putRecords ?? []) {
      await db.run(
        `insert into ${this.records} (collection, id, version, body) values (?, ?, ?, ?)
           on conflict (collection, id) do update set version = excluded.version, body = excluded.body`,
        [record.collection, record.id, record.version, JSON.stringify(record)],
      );
    }
    for (const { collection, id } of change.markListed ?? []) {
      await db.run(`update ${this.records} set listed = 1 where collection = ? and id = ?`, [collection, id]);
    }
    for (const part of chunks(change.deleteNotices ?? [])) {
      await db.run(`delete from ${this.notices} where id in (${placeholders(part.length)})`, part);
    }
    for (const notice of change.putNotices ?? []) {
      await db.run(`insert into ${this.notices} (id, body) values (?, ?)`, [notice.id, JSON.stringify(notice)]);
    }
    if (change.reset !== undefined) await this.putMeta("reset", JSON.stringify(change.reset));
    if (change.cursor !== undefined) await this.putMeta("cursor", JSON.stringify(change.cursor));
    if (change.pullCollections !== undefined) await this.putMeta("pull_collections", JSON.stringify(change.pullCollections));
    if (change.schema !== undefined) await this.putMeta("schema", JSON.stringify(change.schema));
    if (change.owner !== undefined) await this.putMeta("owner", JSON.stringify(change.owner));
    if (change.ownerAccount !== undefined) await this.putMeta("owner_account", JSON.stringify(change.ownerAccount));
  }

  /**
   * Drops the four tables (after the writes under way), in one transaction: the next use creates
   * them again, empty. Other connections to the file (a background task's client) must be closed
   * first: this one cannot see them.
   */
  destroy(): Promise<void> {
    const drop = this.queue.then(async () => {
      await this.db.transaction(async () => {
        for (const table of [this.records, this.outbox, this.notices, this.meta]) await this.db.execute(`drop table if exists ${table}`);
      });
      this.ready = null;
    });
    this.queue = drop.catch(() => {});
    return drop;
  }

  /** Where the stored pull stands (read in the transaction, as the revision is). */
  private async position() {
    const rows = await this.db.getAll<{ key: string; value: string }>(`select key, value from ${this.meta} where key in ('cursor', 'reset')`);
    const meta = new Map(rows.map((r) => [r.key, JSON.parse(r.value) as unknown]));
    return pullPosition((meta.get("cursor") ?? null) as string | null, (meta.get("reset") ?? null) as RunningReset | null);
  }

  private async putMeta(key: string, value: string): Promise<void> {
    await this.db.run(`insert into ${this.meta} (key, value) values (?, ?) on conflict (key) do update set value = excluded.value`, [key, value]);
  }
}

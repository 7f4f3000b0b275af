// The durable local store of a device, behind a deliberately small interface
// so an app can back it with whatever it has (SQLite, AsyncStorage, IndexedDB,
// a file). The client keeps a copy in memory and hands every change to the
// adapter as ONE `apply` call that must be atomic: either all of it is durable
// or none of it is. That is the whole contract; see client/README.md.
import type { MetaResponse } from "../functions/_shared/schemas/meta.ts";
import type { SyncOp, SyncRecord } from "../functions/_shared/schemas/sync.ts";

/** The fields of a record (what `data` holds on the wire). */
export type RecordData = NonNullable<SyncRecord["data"]>;

/**
 * The server's collections and their fields, as GET /v1/meta last published
 * them, with the batch limits (absent in what clients before them stored).
 */
export type ServerSchema = Pick<MetaResponse, "collections" | "collection_schemas"> & {
  limits?: Pick<MetaResponse["limits"], "max_ops_per_batch" | "max_body_bytes">;
};

/** An op waiting in the outbox, in the order the app wrote it. */
export interface PendingOp {
  /** Exactly what goes on the wire; `op_id` never changes once the op was sent. */
  op: SyncOp;
  /**
   * Set (and stored) before the op is first handed to the network. From then
   * on the server may have applied it, so it is never coalesced or dropped
   * locally; it is resent with the same op_id until the server answers.
   */
  sent: boolean;
  /**
   * The server's data of the record at `base_version` (null when the record
   * did not exist or was deleted). The default conflict rule compares it with
   * the server's current data to tell which fields another device changed.
   */
  base_data: RecordData | null;
}

/** Everything a device keeps, as `load` returns it. */
export interface StoredState {
  /** The server's state of every record this device knows (tombstones included). */
  records: SyncRecord[];
  /** Pending ops, oldest first. */
  outbox: PendingOp[];
  /** The pull cursor; null before the first complete pull and after a resync. */
  cursor: string | null;
  /** What the last GET /v1/meta said about the collections (absent or null until the first one). */
  schema?: ServerSchema | null;
}

/** One atomic change to the store. Absent fields mean "unchanged". */
export interface StorageChange {
  /** Remove by (collection, id): records the user can no longer see. Applied before `putRecords`. */
  deleteRecords?: { collection: string; id: string }[];
  /** Insert or replace by (collection, id). */
  putRecords?: SyncRecord[];
  /** Insert or replace by op_id; a replaced op keeps its place in the outbox, a new one goes last. */
  putOps?: PendingOp[];
  /** Remove from the outbox by op_id. Applied before `putOps`. */
  deleteOps?: string[];
  /** The new cursor (null clears it). */
  cursor?: string | null;
  /** The server's collections, replaced whole. */
  schema?: ServerSchema | null;
}

export interface SyncStorage {
  /** Reads everything the device stored (an empty state the first time). */
  load(): Promise<StoredState>;
  /** Makes `change` durable, atomically. Resolves only once it is durable. */
  apply(change: StorageChange): Promise<void>;
}

export function recordKey(collection: string, id: string): string {
  return `${collection}/${id}`;
}

/**
 * The state as maps: records by key, and the outbox by op_id in insertion
 * order (a Map keeps the position of a replaced key, which is exactly the
 * outbox rule). Shared by the client's in-memory copy and the adapters here.
 */
export class StateMaps {
  readonly records = new Map<string, SyncRecord>();
  readonly outbox = new Map<string, PendingOp>();
  cursor: string | null = null;
  schema: ServerSchema | null = null;

  static from(state: StoredState): StateMaps {
    const maps = new StateMaps();
    for (const record of state.records) maps.records.set(recordKey(record.collection, record.id), record);
    for (const pending of state.outbox) maps.outbox.set(pending.op.op_id, pending);
    maps.cursor = state.cursor;
    maps.schema = state.schema ?? null;
    return maps;
  }

  apply(change: StorageChange): void {
    for (const { collection, id } of change.deleteRecords ?? []) this.records.delete(recordKey(collection, id));
    for (const record of change.putRecords ?? []) this.records.set(recordKey(record.collection, record.id), record);
    for (const opId of change.deleteOps ?? []) this.outbox.delete(opId);
    for (const pending of change.putOps ?? []) this.outbox.set(pending.op.op_id, pending);
    if (change.cursor !== undefined) this.cursor = change.cursor;
    if (change.schema !== undefined) this.schema = change.schema;
  }

  toState(): StoredState {
    return { records: [...this.records.values()], outbox: [...this.outbox.values()], cursor: this.cursor, schema: this.schema };
  }
}

/** Copies through JSON so neither side can mutate what the other holds, as a real store would. */
function detached<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

/**
 * Keeps everything in memory: for tests, and for apps that do not need the
 * outbox to survive a restart (then pending writes are lost with the process).
 */
export class MemoryStorage implements SyncStorage {
  private readonly maps = new StateMaps();

  async load(): Promise<StoredState> {
    return detached(this.maps.toState());
  }

  async apply(change: StorageChange): Promise<void> {
    this.maps.apply(detached(change));
  }
}

// The durable local store of a device, behind a deliberately small interface
// so an app can back it with whatever it has (SQLite, AsyncStorage, IndexedDB,
// a file). The client keeps a copy in memory and hands every change to the
// adapter as ONE `apply` call that must be atomic: either all of it is durable
// or none of it is. That is the whole contract; see client/README.md.
import type { MetaResponse } from "../functions/_shared/schemas/meta.ts";
import type { SyncOp, SyncRecord } from "../functions/_shared/schemas/sync.ts";
import { TidesyncStoreWrittenElsewhereError } from "./api-error.ts";
import type { SyncEvent } from "./events.ts";

/** The fields of a record (what `data` holds on the wire). */
export type RecordData = NonNullable<SyncRecord["data"]>;

/**
 * The server's collections and their fields, as GET /v1/meta last published
 * them, with the batch limits and max_pull_limit (absent in what clients before them stored).
 */
export type ServerSchema = Pick<MetaResponse, "collections" | "collection_schemas"> & {
  limits?: Pick<MetaResponse["limits"], "max_ops_per_batch" | "max_body_bytes"> & Partial<Pick<MetaResponse["limits"], "max_pull_limit">>;
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

/** A record's key: its collection and id. */
export interface RecordRef {
  collection: string;
  id: string;
}

/** Everything a device keeps (what a whole-state store loads and saves). */
export interface StoredState {
  /** The server's state of every record this device knows (tombstones included). */
  records: SyncRecord[];
  /** Pending ops, oldest first. */
  outbox: PendingOp[];
  /** The pull cursor; null before the first complete pull and after a resync. */
  cursor: string | null;
  /**
   * The `collections` filter the pull's cursors (this one, the running full sync's) were issued for
   * (a cursor is bound to its filter): null, none (every collection); absent, not recorded (a store
   * from before it, or that never pulled).
   */
  pullCollections?: string[] | null;
  /** What the last GET /v1/meta said about the collections (absent or null until the first one). */
  schema?: ServerSchema | null;
  /** The user whose data this is: the first sync stores its token's user (absent or null before). */
  owner?: string | null;
  /**
   * Which account of `owner`'s id this is (its creation time, GET /v1/whoami's account_created_at:
   * an account deleted and created again with the same id is another): stored by the first sync
   * that asks, absent or null before (client/store-owner.ts).
   */
  ownerAccount?: string | null;
  /**
   * Which write of a WholeStateStorage this state is (a new random one each write; absent in stores
   * with one writer by construction, and before the first write): how it tells another instance's write.
   */
  stamp?: string;
}

/**
 * A full sync under way (a page with `reset: true` began it): an id its first page drew, and the
 * cursor of its next page. Kept where the marks of `markListed` are: a store whose marks do not
 * survive a restart forgets it too (the full sync then starts over).
 */
export interface RunningReset {
  id: string;
  cursor: string;
}

/**
 * Where the store's pull stands: the cursor of the next page, and the full sync it belongs to (null:
 * an incremental pull, `cursor` the stored one). A page applies only where it was requested from.
 */
export interface PullPosition {
  cursor: string | null;
  reset: string | null;
}

/** The pull position of a stored cursor and running full sync (the one rule the stores and the client share). */
export function pullPosition(cursor: string | null, reset: RunningReset | null | undefined): PullPosition {
  return reset ? { cursor: reset.cursor, reset: reset.id } : { cursor, reset: null };
}

export function samePosition(a: PullPosition, b: PullPosition): boolean {
  return a.cursor === b.cursor && a.reset === b.reset;
}

/**
 * An event a client of a shared store could not tell (it had no listener: a background task's),
 * kept in the store, in order, until a client with listeners delivers it (then deletes it).
 */
export interface StoredNotice {
  id: string;
  event: SyncEvent;
}

/** The part of the state the client keeps in memory: small whatever the number of records. */
export type DeviceState = Omit<StoredState, "records"> & {
  /** The store's revision when it was read (stores that implement `revision`). */
  revision?: number;
  /** The full sync under way (absent or null: none). */
  reset?: RunningReset | null;
  /** Events waiting for a client with listeners, oldest first (stores that implement `revision`). */
  notices?: StoredNotice[];
};

/** One atomic change to the store. Absent fields mean "unchanged". */
export interface StorageChange {
  /** Remove by (collection, id): records the user can no longer see. Applied before `putRecords`. */
  deleteRecords?: RecordRef[];
  /** Insert or replace by (collection, id). */
  putRecords?: SyncRecord[];
  /** Insert or replace by op_id; a replaced op keeps its place in the outbox, a new one goes last (in this order; one `deleteOps` removed goes last too). */
  putOps?: PendingOp[];
  /** Remove from the outbox by op_id. Applied before `putOps`. */
  deleteOps?: string[];
  /** The new cursor (null clears it). */
  cursor?: string | null;
  /** The filter the pull's cursors are issued for (see StoredState.pullCollections). */
  pullCollections?: string[] | null;
  /** The server's collections, replaced whole. */
  schema?: ServerSchema | null;
  /** The user whose data this is (set once, by the first sync). */
  owner?: string;
  /** Which account of the owner's id (set once, by the first sync that asks). */
  ownerAccount?: string;
  /**
   * A full sync (a page with `reset: true`) begins: forget which records were listed.
   * Applied first. Marks need not survive a restart: an interrupted full sync starts over.
   */
  beginReset?: boolean;
  /** Records a page of the running full sync listed (see `unlistedRecords`). */
  markListed?: RecordRef[];
  /** Events to keep for a client with listeners: they go after the stored ones (stores that implement `revision`). */
  putNotices?: StoredNotice[];
  /** Delivered (or too old to keep) notices, by id. Applied before `putNotices`. */
  deleteNotices?: string[];
  /** The full sync under way after this change (null: none, it ended or was abandoned). */
  reset?: RunningReset | null;
  /**
   * Apply only if the store's pull still stands here (`pullPosition` of its cursor and running full
   * sync); else throw StaleStoreError and apply nothing. Set on every change a pull makes: a page
   * requested before another client (sharing the store) moved the pull is not applied.
   */
  ifPull?: PullPosition;
  /**
   * Apply only if the store's revision is still this one; else throw StaleStoreError and
   * apply nothing (set by the client for stores that implement `revision`).
   */
  ifRevision?: number;
  /**
   * The stamp the state after this change carries (StoredState.stamp): set by a WholeStateStorage
   * on the change it hands its `persist`, so that a store saving only what changed saves it too.
   */
  stamp?: string;
}

/** apply() refused: another writer changed the store since the client read it. Nothing was applied. */
export class StaleStoreError extends Error {
  constructor() {
    super("the store was changed by another writer since it was read");
    this.name = "StaleStoreError";
  }
}

/**
 * The device's durable store, queried rather than loaded whole, so a device
 * can hold far more records than it could keep in memory (client/storage-sqlite.ts).
 * Every `apply` is atomic: all of it durable, or none of it.
 */
export interface SyncStorage {
  /** The outbox (in order), the cursor, the running full sync and the schema: what the client keeps in memory. */
  loadState(): Promise<DeviceState>;
  /** The stored records among `refs` (unknown ones left out), in any order. */
  getRecords(refs: readonly RecordRef[]): Promise<SyncRecord[]>;
  /**
   * Up to `limit` stored records ordered by (collection, id), after `after`
   * (null: from the first); only `collection`'s when it is given.
   */
  listRecords(collection: string | null, after: RecordRef | null, limit: number): Promise<SyncRecord[]>;
  /**
   * Up to `limit` stored records of `collections` (null: all) that no `markListed` named
   * since the last `beginReset`: what a completed full sync did not list.
   */
  unlistedRecords(collections: readonly string[] | null, limit: number): Promise<RecordRef[]>;
  /** Makes `change` durable, atomically. Resolves only once it is durable. */
  apply(change: StorageChange): Promise<void>;
  /**
   * For a store that several writers share (an app and its background task, each with a client
   * on one SQLite file): a number every apply() raises by exactly one, whoever makes it. The
   * client compares it before each state change and reloads its outbox and cursor when another
   * writer moved it; loadState() returns it (read before the rest), and apply() honours
   * `ifRevision` atomically, and keeps `putNotices` (returned by loadState() as `notices`) until
   * `deleteNotices`. A store without it has one writer (MemoryStorage; FileStorage locks its file).
   */
  revision?(): Promise<number>;
  /**
   * Deletes everything stored (records, outbox, cursor, owner and its account), after the writes
   * under way: the store then reads as a new one, bound to no user, and the next sync binds it.
   * Call it only once every client on the store is closed (`client.close()`): a client still
   * open keeps what it loaded in memory and would write it back. FileStorage refuses while
   * another instance holds its file; SqliteStorage cannot know of the other connections to it.
   */
  destroy?(): Promise<void>;
}

export function recordKey(collection: string, id: string): string {
  return `${collection}/${id}`;
}

/** (collection, id) order, the order listRecords pages in. */
function compareRefs(a: RecordRef, b: RecordRef): number {
  return a.collection < b.collection ? -1 : a.collection > b.collection ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/**
 * The whole state as maps: records by key, and the outbox by op_id in
 * insertion order (a Map keeps the position of a replaced key, which is
 * exactly the outbox rule), plus the marks of a running full sync.
 */
export class StateMaps {
  readonly records = new Map<string, SyncRecord>();
  readonly outbox = new Map<string, PendingOp>();
  readonly listed = new Set<string>();
  /** The full sync under way: with the marks, not persisted by toState(). */
  reset: RunningReset | null = null;
  cursor: string | null = null;
  /** Absent (undefined) until recorded, as in stores written before it existed. */
  pullCollections?: string[] | null;
  schema: ServerSchema | null = null;
  owner: string | null = null;
  ownerAccount: string | null = null;
  /** StoredState.stamp: absent until a WholeStateStorage that checks for other writers writes. */
  stamp?: string;

  static from(state: StoredState): StateMaps {
    const maps = new StateMaps();
    for (const record of state.records) maps.records.set(recordKey(record.collection, record.id), record);
    for (const pending of state.outbox) maps.outbox.set(pending.op.op_id, pending);
    maps.cursor = state.cursor;
    if (state.pullCollections !== undefined) maps.pullCollections = state.pullCollections;
    maps.schema = state.schema ?? null;
    maps.owner = state.owner ?? null;
    maps.ownerAccount = state.ownerAccount ?? null;
    if (state.stamp !== undefined) maps.stamp = state.stamp;
    return maps;
  }

  apply(change: StorageChange): void {
    if (change.ifPull && !samePosition(pullPosition(this.cursor, this.reset), change.ifPull)) throw new StaleStoreError();
    if (change.beginReset) this.listed.clear();
    if (change.reset !== undefined) this.reset = change.reset;
    for (const { collection, id } of change.markListed ?? []) this.listed.add(recordKey(collection, id));
    for (const { collection, id } of change.deleteRecords ?? []) this.records.delete(recordKey(collection, id));
    for (const record of change.putRecords ?? []) this.records.set(recordKey(record.collection, record.id), record);
    for (const opId of change.deleteOps ?? []) this.outbox.delete(opId);
    for (const pending of change.putOps ?? []) this.outbox.set(pending.op.op_id, pending);
    if (change.cursor !== undefined) this.cursor = change.cursor;
    if (change.pullCollections !== undefined) this.pullCollections = change.pullCollections;
    if (change.schema !== undefined) this.schema = change.schema;
    if (change.owner !== undefined) this.owner = change.owner;
    if (change.ownerAccount !== undefined) this.ownerAccount = change.ownerAccount;
    if (change.stamp !== undefined) this.stamp = change.stamp;
  }

  toState(): StoredState {
    const stamp = this.stamp === undefined ? {} : { stamp: this.stamp };
    return { records: [...this.records.values()], outbox: [...this.outbox.values()], cursor: this.cursor, schema: this.schema, ...this.recordedFields(), ...stamp };
  }

  /** The owner, its account and the pull's filter: absent until set, as in stores written before they existed. */
  private recordedFields(): Pick<StoredState, "owner" | "ownerAccount" | "pullCollections"> {
    return {
      ...(this.owner === null ? {} : { owner: this.owner }),
      ...(this.ownerAccount === null ? {} : { ownerAccount: this.ownerAccount }),
      ...(this.pullCollections === undefined ? {} : { pullCollections: this.pullCollections }),
    };
  }

  deviceState(): DeviceState {
    return { outbox: [...this.outbox.values()], cursor: this.cursor, schema: this.schema, ...this.recordedFields(), ...(this.reset ? { reset: this.reset } : {}) };
  }

  getRecords(refs: readonly RecordRef[]): SyncRecord[] {
    const keys = new Set(refs.map(({ collection, id }) => recordKey(collection, id)));
    return [...keys].flatMap((key) => this.records.get(key) ?? []);
  }

  listRecords(collection: string | null, after: RecordRef | null, limit: number): SyncRecord[] {
    return [...this.records.values()]
      .filter((r) => (collection === null || r.collection === collection) && (after === null || compareRefs(r, after) > 0))
      .sort(compareRefs)
      .slice(0, limit);
  }

  unlistedRecords(collections: readonly string[] | null, limit: number): RecordRef[] {
    const scope = collections === null ? null : new Set(collections);
    const unlisted: RecordRef[] = [];
    for (const [key, { collection, id }] of this.records) {
      if (unlisted.length >= limit) break;
      if ((scope === null || scope.has(collection)) && !this.listed.has(key)) unlisted.push({ collection, id });
    }
    return unlisted;
  }
}

/** A WholeStateStorage write's stamp: random, so that two instances never write the same one. */
function newStamp(): string {
  return `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 12)}`;
}

/** Copies through JSON so neither side can mutate what the other holds, as a real store would. */
export function detached<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

/**
 * A store that keeps the whole state in memory (StateMaps) and persists it
 * with `persist`, which is given the change and the state after it. For
 * small data sets: memory, a JSON file, AsyncStorage (one setItem).
 *
 * One writer at a time: each instance writes the whole state it holds, so a
 * second instance on the same data (another browser tab) would overwrite the
 * first one's writes. Unless the store has one writer by construction
 * (`soleWriter`), every state written carries a new `stamp`, and before each
 * write the stored one is read back (`storedStamp`): when it is not the one
 * this instance read or last wrote, the change is refused, nothing written
 * (TidesyncStoreWrittenElsewhereError), and so is every later one of this
 * instance. Two writes in the moment between the other's check and its write
 * are not caught then, but the overwritten instance's next write is refused.
 *
 * A subclass offers `destroy()` (SyncStorage) by awaiting `settle()` and then removing what it
 * stored (its key, its file).
 */
export abstract class WholeStateStorage implements SyncStorage {
  /** Reads the whole stored state (an empty one the first time). */
  protected abstract read(): Promise<StoredState>;
  /**
   * Makes the state after `change` durable, atomically: all of `next.toState()`, or only what
   * `change` touched, its `stamp` included (`change.stamp`, absent for a `soleWriter` store).
   */
  protected abstract persist(next: StateMaps, change: StorageChange): Promise<void>;

  /** False when `persist` cannot fail (memory): changes then apply in place, without a copy. */
  protected readonly copyOnWrite: boolean = true;
  /** True when no other instance can write the same data (memory; a file this instance locked): no stamps, no read-back. */
  protected readonly soleWriter: boolean = false;

  /** The stamp of the state as stored now (by default read() whole; a store may read it more cheaply). */
  protected async storedStamp(): Promise<string | undefined> {
    return (await this.read()).stamp;
  }
  private maps: Promise<StateMaps> | null = null;
  /** Writes run one after another, in call order. */
  private queue: Promise<void> = Promise.resolve();

  /** Waits for the writes under way, then forgets the state: the next call reads the store again. */
  protected async settle(): Promise<void> {
    await this.queue;
    this.maps = null;
  }

  protected state(): Promise<StateMaps> {
    this.maps ??= this.read().then((state) => StateMaps.from(detached(state)));
    return this.maps;
  }

  /** Everything stored (a copy). */
  async load(): Promise<StoredState> {
    return detached((await this.state()).toState());
  }

  async loadState(): Promise<DeviceState> {
    return detached((await this.state()).deviceState());
  }

  async getRecords(refs: readonly RecordRef[]): Promise<SyncRecord[]> {
    return detached((await this.state()).getRecords(refs));
  }

  async listRecords(collection: string | null, after: RecordRef | null, limit: number): Promise<SyncRecord[]> {
    return detached((await this.state()).listRecords(collection, after, limit));
  }

  async unlistedRecords(collections: readonly string[] | null, limit: number): Promise<RecordRef[]> {
    return (await this.state()).unlistedRecords(collections, limit);
  }

  apply(change: StorageChange): Promise<void> {
    const write = this.queue.then(async () => {
      const current = await this.state();
      if (!this.soleWriter) {
        const stored = await this.storedStamp();
        // A stamp this instance wrote and the store does not hold: its persist does not save it.
        if (stored !== current.stamp) throw new TidesyncStoreWrittenElsewhereError(stored === undefined && current.stamp !== undefined ? "unsaved" : "overwritten");
      }
      // Apply to a copy first so a failed write leaves memory and the store agreeing.
      let next = current;
      if (this.copyOnWrite) {
        next = StateMaps.from(detached(current.toState()));
        for (const key of current.listed) next.listed.add(key);
        next.reset = current.reset;
      }
      const stamp = this.soleWriter ? {} : { stamp: newStamp() };
      next.apply({ ...detached(change), ...stamp });
      await this.persist(next, { ...change, ...stamp });
      this.maps = Promise.resolve(next);
    });
    this.queue = write.catch(() => {});
    return write;
  }
}

/**
 * Keeps everything in memory: for tests, and for apps that do not need the
 * outbox to survive a restart (then pending writes are lost with the process).
 */
export class MemoryStorage extends WholeStateStorage {
  protected override readonly copyOnWrite = false;
  protected override readonly soleWriter = true;

  protected async read(): Promise<StoredState> {
    return { records: [], outbox: [], cursor: null, schema: null };
  }

  protected async persist(): Promise<void> {}

  /** Forgets everything held: the next read starts from an empty store. */
  async destroy(): Promise<void> {
    await this.settle();
  }
}

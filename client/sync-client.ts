// The offline-first sync client: local reads and writes against the device's
// store, a durable outbox, and a sync loop (push, then pull until has_more is
// false) that survives lost answers, restarts and conflicts. docs/sync.md
// explains the protocol; client/README.md shows how an app uses this.
//
// Invariants the code below keeps:
// - An op is stored as `sent` BEFORE it is handed to the network, and from then
//   on it is only ever resent unchanged (same op_id) until the server answers
//   for it. The server's ledger makes the resend exactly-once.
// - Sent ops are resent before any new op is sent, in outbox order.
// - Every state change (outbox, records, cursor) is one atomic storage.apply,
//   made under one mutex, so a crash never leaves half of a server answer.
// - Only the outbox, the cursor and the schema live in memory; records are
//   read from the storage when needed (a device may hold 100,000 of them).
// - The store is the truth: another client may share it (an app and its
//   background task on one SQLite file). Each state change first reads the
//   outbox and cursor again if the store's revision moved, and is refused
//   whole (and redone) if it moves before the change is applied. A pull page
//   applies only where the store's pull still stands (its cursor, or the full
//   sync under way, by id): another client's newer pages and full sync stand.
// - A record the server says this user cannot see (deleted, access revoked,
//   NOT_FOUND) leaves the device: its row and every queued op for it (but a
//   refused create the record's later write carries on stays: foldRefusedCreate). One a
//   full sync did not list leaves too, unless ops are queued for it: it stays
//   until the server answers them.
// - Ids are uuids, kept lower-case (the server compares and returns them so).
import { DEFAULT_LIMITS } from "../functions/_shared/limits.ts";
import { nonFiniteNumberAt } from "../functions/_shared/non-finite-numbers.ts";
import type { ChangesResponse, SyncOp, SyncOpError, SyncOpResult, SyncRecord } from "../functions/_shared/schemas/sync.ts";
import { isUuid } from "../functions/_shared/uuid.ts";
import { unlessAborted } from "./abortable.ts";
import type { TidesyncApi } from "./api-client.ts";
import {
  TidesyncAbortedError,
  TidesyncApiError,
  TidesyncError,
  TidesyncNetworkError,
  TidesyncResponseError,
  TidesyncValidationError,
} from "./api-error.ts";
import type { BackoffOptions } from "./backoff.ts";
import { BatchSize } from "./batch-refusal.ts";
import { fittingCount, pullLimitOf, scopeFieldsOf } from "./batching.ts";
import { CollectionCatalog } from "./collection-catalog.ts";
import { rejectedEvent, type SyncEvent, type SyncEventListener, type WriteDiscardedEvent } from "./events.ts";
import { callListeners } from "./listeners.ts";
import { type LocalRecord, localView } from "./local-view.ts";
import { Mutex } from "./mutex.ts";
import { PokeListener, type PokeListenerOptions, type RealtimeClientLike } from "./realtime-pokes.ts";
import { baseVersion, enqueueBehind, foldRefusedCreate, Outbox, outboxChange } from "./outbox.ts";
import { type ConflictHandler, type ConflictInfo, type ConflictResolution, discardedFields, jsonEqual, rebasedOp, serverWinsPerField } from "./rebase.ts";
import { type RetryOptions, retryOptions, RetryWaker, type Sleep, withRetry } from "./retry.ts";
import { StoreGuard } from "./store-owner.ts";
import { StatusStore, type StatusListener, type SyncStatus } from "./status.ts";
import {
  type DeviceState,
  type PendingOp,
  type PullPosition,
  pullPosition,
  type RecordData,
  recordKey,
  type RecordRef,
  type RunningReset,
  samePosition,
  type ServerSchema,
  StaleStoreError,
  type StorageChange,
  type StoredNotice,
  type SyncStorage,
} from "./storage.ts";

export interface TidesyncClientOptions {
  api: TidesyncApi;
  storage: SyncStorage;
  /**
   * The app's installation id (a uuid generated once per install; the same one
   * POST /v1/auth/session registers). Sent as the batch's device_id, so the
   * server never lets this device's own ops conflict with each other.
   */
  installationId: string;
  /**
   * Pull only these collections (default: all). The store keeps the filter its cursor was issued
   * for: while that one takes these in (another client's on a shared store, an app's of every
   * collection), the pull goes on with it and brings its other collections too (client/README.md,
   * "Background sync"); one that adds a collection pulls everything once with its own. Those the
   * server does not sync (not in GET /v1/meta) are left out, with a `collections_unavailable` event.
   */
  collections?: readonly string[];
  /**
   * How to rebase a local write the server answered `conflict` for (default serverWinsPerField).
   * Asked outside the client's lock: it may wait on the user and use the client (askConflicts).
   */
  onConflict?: ConflictHandler;
  backoff?: Partial<BackoffOptions>;
  /**
   * Upper bounds of one push: at most these and what the server published in the last
   * GET /v1/meta this device stored (before one: the contract's defaults). A 413 makes
   * the client halve its batches.
   */
  maxOpsPerBatch?: number;
  maxBodyBytes?: number;
  /** Pull page size (default: the server's default), at most the max_pull_limit the server published. */
  pullLimit?: number;
  /**
   * Most push batches in one sync(); the ops past them wait for the next sync (SyncReport.queued
   * counts what a sync left). Default: no cap, a sync pushes until every op queued before it
   * began is answered (client/README.md, "Sync when it makes sense").
   */
  maxBatchesPerSync?: number;
  /**
   * Check each write against the server's collections and field types before
   * queueing it (default true). They come from GET /v1/meta, fetched by the
   * first sync of each open client before its push, and stored; until a device
   * has seen them once, writes are queued unchecked (the server validates them
   * anyway). Until this open client has fetched them, the stored ones check
   * only the collections and fields they name: a table or field the server
   * added since is queued as it is, for the server to judge. A pull bringing
   * a collection the fetched ones do not name fetches them again. false skips the
   * checks; uuid fields are lower-cased either way once the fields are known.
   */
  validate?: boolean;
  /** Injectable for tests and for platforms without crypto.randomUUID (e.g. expo-crypto). */
  generateId?: () => string;
  random?: () => number;
  /** The retries' wait (default a timer); `ended` aborts when the wait is cut short (close(), a wake): stop the timer then. */
  sleep?: Sleep;
  /** The clock of lastSyncedAt. */
  now?: () => Date;
  /**
   * The Retry-After gate's clock, ms (default performance.now()): monotonic, so setting the
   * device's time back does not hold syncs back by as much (client/retry.ts).
   */
  monotonicNow?: () => number;
}

export interface SyncReport {
  /** Ops the server answered for (applied, duplicate, conflict or rejected). */
  acknowledged: number;
  applied: number;
  /** Answers `duplicate` (an earlier attempt had reached the server). */
  duplicates: number;
  conflicts: number;
  rejected: number;
  /** Changes received by the pull. */
  pulled: number;
  /** The pull had to start from scratch (410 RESYNC_REQUIRED or 400 INVALID_CURSOR). */
  resynced: boolean;
  /**
   * Ops still queued when the sync resolved (status.pending then): writes made while it ran, which
   * the next sync pushes, and with maxBatchesPerSync the ops past its cap. Without a cap, none of
   * the ops queued before the sync began.
   */
  queued: number;
}

function defaultGenerateId(): string {
  return globalThis.crypto.randomUUID();
}

/** Records read per storage query (list(), the sweep after a full sync). */
const PAGE = 500;

/** Most events a shared store keeps for a client with listeners (the oldest go first). */
const MAX_NOTICES = 100;

/**
 * Batches a sync pushes, once every op queued before it began is answered, of the writes made while
 * it ran: an app that keeps writing does not hold the sync (and its pull) for ever.
 */
const LATE_BATCHES = 100;

/** Times a state change is redone on a fresh read when another writer keeps changing the store first. */
const STALE_RETRIES = 10;

/** What an op of a record the user cannot see anymore loses: its fields, or the whole delete (null). */
function lostFields(op: SyncOp): string[] | null {
  return op.type === "upsert" ? Object.keys(op.data ?? {}) : null;
}

/** The same server state (versions of a restored database may be issued again, to other data). */
function sameRecord(a: SyncRecord, b: SyncRecord): boolean {
  return a.version === b.version && a.deleted === b.deleted && jsonEqual(a.data, b.data);
}

/**
 * The record's unsent ops based on a version above `record`'s, the server's state (a restored
 * database no longer has the version they began from), based on it instead: the server would
 * refuse them as ahead_of_server; on the record it has, the fields they set are the user's intent.
 * Sent ops are resent unchanged (the server answers them ahead_of_server, and the answer's record
 * replaces the local one).
 */
function rebasedOnRestored(outbox: Outbox, record: SyncRecord): PendingOp[] {
  return outbox.forRecord(record.collection, record.id)
    .filter((p) => !p.sent && p.op.base_version !== null && p.op.base_version > record.version)
    .map((p) => ({ ...p, op: { ...p.op, base_version: record.version }, base_data: record.deleted ? null : record.data }));
}

/** By an answered op's op_id, the queued op that carries its write on: the op rebased from a conflict, or the later op a refused create was folded into. */
type Successors = Map<string, string>;

/** A batch's answer is for its ops, in order. */
function checkResults(batch: PendingOp[], results: SyncOpResult[]): void {
  if (results.length !== batch.length || results.some((result, i) => result.op_id !== batch[i].op.op_id)) {
    throw new TidesyncResponseError({ message: "the batch results do not match the ops sent", status: 200 });
  }
}

/** What the server did with an op: a duplicate carries the outcome of the first processing (and the record as it is now). */
function outcomeOf(result: SyncOpResult): "applied" | "conflict" | "rejected" {
  return result.status === "duplicate" ? (result.original_status ?? "applied") : result.status;
}

export class TidesyncClient {
  /** The app's API, guarded: each request checks the store's owner first, and close() cancels them. */
  private readonly api: TidesyncApi;
  /** Aborted by close(): no request of this client is sent after it. */
  private readonly closing = new AbortController();
  private readonly storage: SyncStorage;
  private readonly installationId: string;
  private readonly onConflict: ConflictHandler;
  /** Backoff, and the Retry-After gate that also holds back the next sync() (client/retry.ts). */
  private readonly retry: RetryOptions;
  /** sync() while the running sync waits to retry (the app's on reconnect, a poke) has it retry now. */
  private readonly waker = new RetryWaker();
  private readonly maxBodyBytes: number;
  private readonly maxOpsPerBatch: number;
  private readonly generateId: () => string;
  private readonly now: () => Date;
  private readonly mutex = new Mutex();
  private readonly statusStore: StatusStore;
  private readonly listeners = new Set<SyncEventListener>();
  /** The op count of the next batch, lowered by whole-batch refusals an op is at fault for. */
  private readonly batchSize: BatchSize;
  private running: Promise<SyncReport> | null = null;
  /** The sync queued to start when the running one ends (sync() while one runs). */
  private followUp: Promise<SyncReport> | null = null;
  private timer: ReturnType<typeof setInterval> | null = null;
  /** The server's collections (null until a GET /v1/meta was seen on this device). */
  private catalog: CollectionCatalog | null;
  /** GET /v1/meta was fetched since this client was opened. */
  private schemaFetched = false;
  /** Collections a pull brought that the catalog did not know, GET /v1/meta fetched again for (once each per open client). */
  private readonly schemaRefreshedFor = new Set<string>();
  /** Realtime pokes being listened to (listen()), refreshed after each sync. */
  private pokes: PokeListener | null = null;

  /** The outbox by op_id, in order (a replaced op keeps its place), by record too: a copy of the stored one. */
  private readonly outbox: Outbox;
  private cursor: string | null;
  /** The `collections` filter the store's cursors were issued for (undefined: not recorded; see pullFilter). */
  private pullCollections: string[] | null | undefined;
  /** The full sync under way in the store (this client's or another's: they go on with each other's). */
  private reset: RunningReset | null;
  /** Events kept in a shared store for a client with listeners (StoredNotice), as of the last read. */
  private notices: StoredNotice[];
  /** The store's revision the copies above are of (stores several writers share: SyncStorage.revision). */
  private revision: number | undefined;
  /** The user whose data the store holds (null until the first sync with a signed-in user). */
  private owner: string | null;
  /** Which account of the owner's id (null until a sync asked: client/store-owner.ts). */
  private ownerAccount: string | null;
  /** Checks each request against the store's owner and account (client/store-owner.ts). */
  private readonly storeGuard: StoreGuard;

  private constructor(private readonly options: TidesyncClientOptions, state: DeviceState) {
    if (!isUuid(options.installationId)) throw new TypeError("installationId must be a uuid");
    // The store belongs to the account that first synced it: a request under another user's token
    // (TidesyncStoreOwnerError) or another account's with that id (TidesyncStoreAccountError) is
    // refused, not sent: at the start of a sync and before each request of it (the guard of
    // this.api), so an answer applied is always one to the owner's token.
    const binding = () => ({ owner: this.owner, account: this.ownerAccount });
    this.storeGuard = new StoreGuard({
      api: options.api,
      binding,
      read: async () => binding(),
      write: async (changed) => {
        await this.commit({ ...(changed.owner === undefined ? {} : { owner: changed.owner }), ...(changed.account === undefined ? {} : { ownerAccount: changed.account }) });
        this.owner = changed.owner ?? this.owner;
        this.ownerAccount = changed.account ?? this.ownerAccount;
      },
      lock: (work) => this.section(work),
    });
    this.api = options.api.guarded({ beforeSend: (user, token, session) => this.storeGuard.check(user, token, session), signal: this.closing.signal });
    this.storage = options.storage;
    this.installationId = options.installationId;
    this.onConflict = options.onConflict ?? serverWinsPerField;
    this.maxOpsPerBatch = options.maxOpsPerBatch ?? DEFAULT_LIMITS.max_ops_per_batch;
    this.maxBodyBytes = options.maxBodyBytes ?? DEFAULT_LIMITS.max_body_bytes;
    this.batchSize = new BatchSize(this.maxOpsPerBatch);
    this.generateId = options.generateId ?? defaultGenerateId;
    this.now = options.now ?? (() => new Date());
    this.retry = retryOptions({ backoff: options.backoff, random: options.random, sleep: options.sleep, monotonicNow: options.monotonicNow });
    this.outbox = new Outbox(state.outbox);
    this.cursor = state.cursor;
    this.pullCollections = state.pullCollections;
    this.reset = state.reset ?? null;
    this.notices = state.notices ?? [];
    this.revision = state.revision;
    this.owner = state.owner ?? null;
    this.ownerAccount = state.ownerAccount ?? null;
    this.statusStore = new StatusStore({ state: "online", pending: this.outbox.size, lastSyncedAt: null, lastErrorCode: null });
    this.catalog = state.schema ? new CollectionCatalog(state.schema, { stored: true }) : null;
  }

  /** Loads the device's outbox, cursor and schema (not its records) and returns a client on it. */
  static async open(options: TidesyncClientOptions): Promise<TidesyncClient> {
    return new TidesyncClient(options, await options.storage.loadState());
  }

  // ------------------------------------------------------------ status, events
  get status(): SyncStatus {
    return this.statusStore.get();
  }

  /** Called with the new status on every change; returns the unsubscribe function. */
  subscribe(listener: StatusListener): () => void {
    return this.statusStore.subscribe(listener);
  }

  /** Conflicts, discarded writes, rejected ops, resyncs; returns the unsubscribe function. */
  on(listener: SyncEventListener): () => void {
    this.listeners.add(listener);
    // Events a shared store kept while no client listened (a background task's sync): told now.
    if (this.revision !== undefined) void this.section(async () => {}).catch(() => {});
    return () => {
      this.listeners.delete(listener);
    };
  }

  /** Tells every listener; one that throws is reported and skipped (client/listeners.ts). */
  private emit(event: SyncEvent): void {
    callListeners(this.listeners, event);
  }

  // ------------------------------------------------------------- local reads
  /** The record as the app sees it (server state + pending local writes), tombstones included. Ids match in any case. */
  async get(collection: string, id: string): Promise<LocalRecord | undefined> {
    id = id.toLowerCase();
    const ops = (await this.outboxToRead()).forRecord(collection, id).map((p) => p.op);
    const [server] = await this.storage.getRecords([{ collection, id }]);
    return localView(collection, id, server, ops);
  }

  /**
   * The live records of a collection as the app sees them, read from the
   * storage a page at a time (`pageSize`); `each` (when given) receives them
   * page by page instead of in one array, so a large collection never has to
   * be in memory at once.
   */
  async list(collection: string): Promise<LocalRecord[]>;
  async list(collection: string, each: (page: LocalRecord[]) => void | Promise<void>, pageSize?: number): Promise<void>;
  async list(collection: string, each?: (page: LocalRecord[]) => void | Promise<void>, pageSize = PAGE): Promise<LocalRecord[] | void> {
    const ops = new Map<string, SyncOp[]>();
    for (const { op } of (await this.outboxToRead()).values()) {
      if (op.collection !== collection) continue;
      const list = ops.get(op.record_id) ?? [];
      list.push(op);
      ops.set(op.record_id, list);
    }
    const all: LocalRecord[] = [];
    const emit = async (views: LocalRecord[]) => {
      const live = views.filter((view) => !view.deleted);
      if (live.length === 0) return;
      if (each) await each(live);
      else all.push(...live);
    };
    const unseen = new Set(ops.keys());
    for (let after: RecordRef | null = null; ;) {
      const records = await this.storage.listRecords(collection, after, pageSize);
      if (records.length === 0) break;
      after = records.at(-1)!;
      await emit(records.map((record) => {
        unseen.delete(record.id);
        return localView(collection, record.id, record, ops.get(record.id) ?? [])!;
      }));
    }
    // Created on this device and not yet acknowledged: only in the outbox.
    await emit([...unseen].map((id) => localView(collection, id, undefined, ops.get(id)!)!));
    if (!each) return all;
  }

  /** The outbox as stored: another writer of the store may have changed it since this client last did. */
  private async outboxToRead(): Promise<Outbox> {
    if (this.revision === undefined || (await this.storage.revision!()) === this.revision) return this.outbox;
    return new Outbox((await this.storage.loadState()).outbox);
  }

  /**
   * Runs a state change under the mutex, on the stored state: when another writer (a background
   * task's client on the same store) changed it, the outbox and cursor are read again first, and
   * a change it makes meanwhile (StaleStoreError: nothing applied) has the section redone.
   */
  private section<T>(work: () => Promise<T>): Promise<T> {
    return this.mutex.run(async () => {
      for (let attempt = 1; ; attempt++) {
        await this.reload();
        try {
          await this.tellKept();
          return await work();
        } catch (error) {
          if (!(error instanceof StaleStoreError) || attempt === STALE_RETRIES) throw error;
        }
      }
    });
  }

  /** Reads the outbox and cursor again if another writer changed the store (the schema: each client fetches its own). */
  private async reload(): Promise<void> {
    if (this.revision === undefined || (await this.storage.revision!()) === this.revision) return;
    const state = await this.storage.loadState();
    this.outbox.clear();
    for (const pending of state.outbox) this.outbox.set(pending);
    this.cursor = state.cursor;
    this.pullCollections = state.pullCollections;
    this.reset = state.reset ?? null;
    this.notices = state.notices ?? [];
    this.owner = state.owner ?? null;
    this.ownerAccount = state.ownerAccount ?? null;
    this.revision = state.revision;
    this.statusStore.update({ pending: this.outbox.size });
  }

  /** Pending ops, oldest first (sent ones included), as of this client's last state change. */
  pendingOps(): PendingOp[] {
    return [...this.outbox.values()];
  }

  /** The server's state of every record this device knows (tombstones included), read whole: for tests and small stores. */
  async serverRecords(): Promise<SyncRecord[]> {
    const all: SyncRecord[] = [];
    for (let after: RecordRef | null = null; ;) {
      const records = await this.storage.listRecords(null, after, PAGE);
      if (records.length === 0) return all;
      all.push(...records);
      after = records.at(-1)!;
    }
  }

  /** The stored records among `refs`, by key. */
  private async recordsByKey(refs: Iterable<RecordRef>): Promise<Map<string, SyncRecord>> {
    const unique = new Map<string, RecordRef>();
    for (const ref of refs) unique.set(recordKey(ref.collection, ref.id), { collection: ref.collection, id: ref.id });
    const found = unique.size > 0 ? await this.storage.getRecords([...unique.values()]) : [];
    return new Map(found.map((record) => [recordKey(record.collection, record.id), record]));
  }

  /** The server's collections and their fields as this device last saw them (GET /v1/meta), or null. */
  get schema(): ServerSchema | null {
    return this.catalog?.schema ?? null;
  }

  /** Fetches GET /v1/meta now and checks later writes against it (sync() does this once per open client). */
  async refreshSchema(): Promise<ServerSchema> {
    const meta = await this.withRetry(() => this.api.meta());
    const schema: ServerSchema = {
      collections: meta.collections,
      collection_schemas: meta.collection_schemas,
      limits: { max_ops_per_batch: meta.limits.max_ops_per_batch, max_body_bytes: meta.limits.max_body_bytes, max_pull_limit: meta.limits.max_pull_limit },
    };
    await this.section(async () => {
      const catalog = new CollectionCatalog(schema);
      await this.commit({ schema, putOps: this.normalisedQueue(catalog) });
      this.catalog = catalog;
    });
    this.schemaFetched = true;
    const own = this.ownCollections();
    if (own && own.unserved.length > 0) this.emit({ type: "collections_unavailable", collections: own.unserved, pulling: own.served });
    return schema;
  }

  /**
   * The unsent upserts whose data `catalog` normalises (uuid fields written
   * before the device knew which fields are uuids), normalised. Sent ops stay
   * as they left: they are resent unchanged, and the server normalises them.
   */
  private normalisedQueue(catalog: CollectionCatalog): PendingOp[] {
    const changed: PendingOp[] = [];
    for (const pending of this.outbox.values()) {
      if (pending.sent || !pending.op.data) continue;
      const data = catalog.normalise(pending.op.collection, pending.op.data);
      if (JSON.stringify(data) !== JSON.stringify(pending.op.data)) changed.push({ ...pending, op: { ...pending.op, data } });
    }
    return changed;
  }

  // ------------------------------------------------------------ local writes
  /** Creates a record with a new id and returns the id. */
  async create(collection: string, data: RecordData): Promise<string> {
    const id = this.newId();
    await this.upsert(collection, id, data);
    return id;
  }

  /** Sets the fields in `patch` (others unchanged); creates the record if it does not exist. */
  async upsert(collection: string, id: string, patch: RecordData): Promise<void> {
    id = this.checkId(id);
    // Before the copy: JSON writes NaN and ±Infinity as null, which would set the field to null unsaid.
    const notFinite = nonFiniteNumberAt(patch);
    if (notFinite !== null) {
      throw new TidesyncValidationError("1 field is invalid", [{ field: `/data${notFinite}`, code: "not_finite", message: "must be a finite number (JSON has no NaN or Infinity)" }]);
    }
    const copy = JSON.parse(JSON.stringify(patch)) as RecordData;
    await this.writeSection(async () => {
      const [server] = await this.storage.getRecords([{ collection, id }]);
      const queued = this.outbox.forRecord(collection, id);
      const view = localView(collection, id, server, queued.map((p) => p.op));
      const data = this.checkData(collection, copy, !view || view.deleted) ?? copy;
      const pending: PendingOp = {
        op: { op_id: this.newId(), collection, record_id: id, type: "upsert", base_version: baseVersion(server, queued), data },
        sent: false,
        base_data: server && !server.deleted ? server.data : null,
      };
      await this.commit(enqueueBehind(queued, this.outbox.last(), pending));
    });
  }

  /** Deletes the record (a no-op if it is unknown or already deleted here). */
  async delete(collection: string, id: string): Promise<void> {
    id = this.checkId(id);
    this.checkData(collection, null, false);
    await this.writeSection(async () => {
      const [server] = await this.storage.getRecords([{ collection, id }]);
      const queued = this.outbox.forRecord(collection, id);
      const view = localView(collection, id, server, queued.map((p) => p.op));
      if (!view || view.deleted) return;
      const pending: PendingOp = {
        op: { op_id: this.newId(), collection, record_id: id, type: "delete", base_version: baseVersion(server, queued) },
        sent: false,
        base_data: server && !server.deleted ? server.data : null,
      };
      await this.commit(enqueueBehind(queued, this.outbox.last(), pending));
    });
  }

  /**
   * A local write's section. Refused once close() has begun (also a write already waiting for the
   * mutex then): a late write at sign-out would wait in the closed store and go out with the
   * user's next sync of it.
   */
  private writeSection(work: () => Promise<void>): Promise<void> {
    const refuseIfClosed = () => {
      if (this.closing.signal.aborted) throw new TidesyncAbortedError();
    };
    refuseIfClosed();
    return this.section(async () => {
      refuseIfClosed();
      await work();
    });
  }

  /** A new lower-case uuid (generateId may be a platform's, e.g. Swift's upper-case UUID strings). */
  private newId(): string {
    return this.generateId().toLowerCase();
  }

  /** The id as stored and sent: a uuid, lower-cased. */
  private checkId(id: string): string {
    if (!isUuid(id)) {
      throw new TidesyncValidationError("1 field is invalid", [{ field: "/record_id", code: "invalid_format", message: "must be a uuid" }]);
    }
    return id.toLowerCase();
  }

  /** The data to queue (null: a delete): checked against the server's collections when known, or with validate: false only normalised. */
  private checkData(collection: string, data: RecordData | null, creating: boolean): RecordData | null {
    if (!this.catalog) return data;
    if (this.options.validate === false) return data && this.catalog.normalise(collection, data);
    return this.catalog.check(collection, data, creating);
  }

  /**
   * Makes `change` durable, then visible, then tells `events`. A shared store (one that has a revision:
   * an app and its background task) keeps, in the same change, events no listener of this client would
   * hear, for a client with listeners (tellKept): the app learns what its background task's sync did.
   */
  private async commit(change: StorageChange, events: readonly SyncEvent[] = []): Promise<void> {
    const keep = events.length > 0 && this.revision !== undefined && this.listeners.size === 0;
    if (keep) change = { ...change, ...this.keptNotices(events) };
    await this.storage.apply(this.revision === undefined ? change : { ...change, ifRevision: this.revision });
    if (this.revision !== undefined) this.revision++;
    const delivered = new Set(change.deleteNotices ?? []);
    this.notices = [...this.notices.filter((notice) => !delivered.has(notice.id)), ...(change.putNotices ?? [])];
    for (const opId of change.deleteOps ?? []) this.outbox.delete(opId);
    for (const pending of change.putOps ?? []) this.outbox.set(pending);
    if (change.cursor !== undefined) this.cursor = change.cursor;
    if (change.pullCollections !== undefined) this.pullCollections = change.pullCollections;
    if (change.reset !== undefined) this.reset = change.reset;
    this.statusStore.update({ pending: this.outbox.size });
    if (!keep) for (const event of events) this.emit(event);
  }

  /** `events` as notices to keep, and the oldest kept ones they push past MAX_NOTICES. */
  private keptNotices(events: readonly SyncEvent[]): Pick<StorageChange, "putNotices" | "deleteNotices"> {
    const putNotices = events.slice(-MAX_NOTICES).map((event) => ({ id: this.newId(), event }));
    const over = this.notices.length + putNotices.length - MAX_NOTICES;
    return { putNotices, ...(over > 0 ? { deleteNotices: this.notices.slice(0, over).map((notice) => notice.id) } : {}) };
  }

  /** Tells this client's listeners the events the store kept (in a section: the notices are as stored), once: they leave the store. */
  private async tellKept(): Promise<void> {
    if (this.notices.length === 0 || this.listeners.size === 0) return;
    const notices = this.notices;
    await this.commit({ deleteNotices: notices.map((notice) => notice.id) });
    for (const { event } of notices) this.emit(event);
  }

  // ---------------------------------------------------------------- the loop
  /** Runs sync() now and then every `intervalMs` (failures show in the status); nothing once close() has begun. */
  start(intervalMs = 30_000): void {
    this.stop();
    // A closed client's timer would refuse every tick and keep the process running for ever.
    if (this.closing.signal.aborted) return;
    // The timer's sync does not wake a backoff: polling does not say the server is back.
    const tick = () => void this.queueSync(false).catch(() => {});
    tick();
    this.timer = setInterval(tick, intervalMs);
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  /**
   * On sign-out: stops the polling and the pokes, cancels a running sync (no request is sent after
   * this; one under way is abandoned, its sent ops stay queued and go out again unchanged) and
   * resolves once it has ended: the store is then left alone, to keep or delete. Later syncs and
   * writes are refused (TidesyncAbortedError): open a new client for the next user's store.
   */
  async close(): Promise<void> {
    this.stop();
    this.pokes?.stop();
    this.pokes = null;
    this.closing.abort();
    // A write already committing finishes before close() resolves; the ones behind it are refused.
    await Promise.allSettled([this.running, this.followUp, this.mutex.run(async () => {})]);
  }

  /**
   * Pulls when the server pokes (Supabase Realtime, private Broadcast topics:
   * the device's lists and its user's own; client/README.md), debounced, and
   * polls every `pollIntervalMs` (default 5 minutes) in case a poke is lost.
   * `realtime` is the app's supabase-js client (signed in: Realtime authorizes
   * private channels with the user's token). A later listen() takes over from
   * this one. Returns the function that stops both (nothing once another
   * listen() has taken over); `stop()` stops the polling only. Once close() has begun it joins nothing and polls nothing.
   */
  listen(realtime: RealtimeClientLike, options: PokeListenerOptions & { pollIntervalMs?: number }): () => void {
    this.pokes?.stop();
    if (this.closing.signal.aborted) return () => {};
    const listener = new PokeListener({
      realtime,
      sync: () => this.sync(),
      scopeIds: () => this.scopeIds(),
      setTimeout: (callback, ms) => setTimeout(callback, ms),
      clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
    }, options);
    this.pokes = listener;
    void listener.refresh();
    this.start(options.pollIntervalMs ?? 5 * 60_000);
    return () => {
      listener.stop();
      // A later listen() took over (a screen mounted again before this one unmounted): its pokes and polling stay.
      if (this.pokes !== listener) return;
      this.pokes = null;
      this.stop();
    };
  }

  /** The ids of the scope records (lists) this device holds: the topics whose pokes concern it. */
  private async scopeIds(): Promise<string[]> {
    const schemas = this.catalog?.schema.collection_schemas ?? {};
    const ids: string[] = [];
    for (const [collection, described] of Object.entries(schemas)) {
      if (described.scope !== "id") continue;
      await this.list(collection, (page) => {
        for (const record of page) if (record.version !== null) ids.push(record.id);
      });
    }
    return ids;
  }

  /**
   * Push every pending op, then pull until up to date. One sync at a time: a
   * call while one runs returns the sync that starts when that one ends (one
   * at most is queued, shared by every call made meanwhile), so what was
   * written before the call is pushed when it resolves. A call while the
   * running sync waits to retry (backoff) has it retry at once: sync() on
   * reconnect takes effect now. A sync first waits out a Retry-After an
   * earlier sync was given; a call does not cut it short. Rejects when the
   * server stays unreachable beyond the retry budget (backoff option) or
   * answers a non-retryable error; the outbox is kept and the next sync()
   * continues where this one stopped.
   */
  sync(): Promise<SyncReport> {
    return this.queueSync(true);
  }

  private queueSync(wake: boolean): Promise<SyncReport> {
    if (this.closing.signal.aborted) return Promise.reject(new TidesyncAbortedError());
    if (this.running) {
      if (wake) this.waker.wake();
      // The running sync may have taken its batches before the caller's writes: they go in the next one.
      this.followUp ??= this.running.catch(() => {}).then(() => {
        this.followUp = null;
        return this.sync();
      });
      return this.followUp;
    }
    const run = this.runSync().finally(() => {
      this.running = null;
    });
    this.running = run;
    return run;
  }

  private async runSync(): Promise<SyncReport> {
    const report: SyncReport = { acknowledged: 0, applied: 0, duplicates: 0, conflicts: 0, rejected: 0, pulled: 0, resynced: false, queued: 0 };
    this.statusStore.update({ state: "syncing" });
    try {
      // Before anything is sent (GET /v1/meta too): another user's queued writes, or an earlier
      // account's with the same id, must not go out with this token. Each request checks again
      // (the user may switch while a sync runs). Its GET /v1/whoami is retried as every request of
      // a sync is; the guard's own refusals are not retryable and stop the sync at once.
      await this.withRetry(() => this.storeGuard.checkCurrent(this.api));
      // Once per open client, first: the stored collections may predate the server's (a table or
      // field added since), and the writes queued meanwhile leave normalised (uuid fields
      // lower-cased) in batches within the published limits. Still one GET per open client.
      if (!this.schemaFetched) await this.refreshSchema();
      await this.push(report);
      await this.pull(report);
      report.queued = this.outbox.size;
      this.statusStore.update({ state: "online", lastSyncedAt: this.now().toISOString(), lastErrorCode: null });
      // Lists joined or left change which topics to hear.
      void this.pokes?.refresh().catch(() => {});
      return report;
    } catch (error) {
      this.statusStore.update({
        // Offline only when the server could not be reached; a server that answered with an error is an error.
        state: error instanceof TidesyncNetworkError ? "offline" : "error",
        lastErrorCode: error instanceof TidesyncError ? error.code : "CLIENT_FAILURE",
      });
      throw error;
    }
  }

  /** The user whose data the store holds (null until a first sync stored it): open another store for another user. */
  get storeUserId(): string | null {
    return this.owner;
  }

  /** Calls `call`, retrying retryable failures with backoff, never sooner than the last Retry-After (also one a past sync got). */
  private async withRetry<T>(call: () => Promise<T>): Promise<T> {
    const result = await withRetry(call, this.retry, (error) => {
      this.statusStore.update({ state: error instanceof TidesyncNetworkError ? "offline" : "syncing", lastErrorCode: (error as TidesyncError).code });
    }, this.closing.signal, this.waker);
    this.statusStore.update({ state: "syncing" });
    return result;
  }

  // -------------------------------------------------------------------- push
  /**
   * Pushes until the outbox is empty. Every op queued when it began is answered first, however
   * many batches that takes, and so is every op that carries one of them on (a rebased op, the
   * later write a refused create was folded into): the writes made before sync() are on the
   * server when it resolves. Then it goes on with the writes made meanwhile for LATE_BATCHES
   * batches at most, so that an app that keeps writing does not hold the sync, and its pull, for
   * ever. maxBatchesPerSync, when the app sets it, caps them all.
   */
  private async push(report: SyncReport): Promise<void> {
    const owed = new Set(await this.section(async () => [...this.outbox.keys()]));
    const owes = () => {
      for (const opId of owed) if (!this.outbox.has(opId)) owed.delete(opId);
      return owed.size > 0;
    };
    const maxBatches = this.options.maxBatchesPerSync ?? Infinity;
    let late = 0;
    for (let round = 0; round < maxBatches; round++) {
      if (!owes() && late++ >= LATE_BATCHES) return;
      const batch = await this.section(() => this.takeBatch());
      if (batch.length === 0) return;
      const successors = await this.pushBatch(batch, report);
      for (const [opId, successor] of successors) if (owed.has(opId)) owed.add(successor);
    }
  }

  /** The next batch: unanswered sent ops first; else new ops, stored as sent before they leave. */
  private async takeBatch(): Promise<PendingOp[]> {
    const all = [...this.outbox.values()];
    const limit = this.batchSize.limit;
    const sent = all.filter((p) => p.sent);
    if (sent.length > 0) return this.fitting(sent, limit);
    const chosen = this.fitting(all, limit).map((p) => ({ ...p, sent: true }));
    if (chosen.length > 0) await this.commit({ putOps: chosen });
    return chosen;
  }

  /** A prefix of `ops` within the op count and body size limits, up to a list's delete that must wait (client/batching.ts); at least one op. */
  private fitting(ops: PendingOp[], limit: number): PendingOp[] {
    const published = this.catalog?.schema.limits;
    const bounds = {
      maxOps: Math.min(limit, published?.max_ops_per_batch ?? limit),
      maxBodyBytes: Math.min(this.maxBodyBytes, published?.max_body_bytes ?? this.maxBodyBytes),
      ...(this.catalog ? { scopeFields: scopeFieldsOf(this.catalog.schema.collection_schemas) } : {}),
    };
    const count = fittingCount(ops.map((p) => p.op), bounds, this.installationId);
    return ops.slice(0, count);
  }

  /** Sends `batch` and acts on the answer; returns the ops that carry answered ones on (Successors). */
  private async pushBatch(batch: PendingOp[], report: SyncReport): Promise<Successors> {
    const request = { device_id: this.installationId, ops: batch.map((p) => p.op) };
    let results: SyncOpResult[];
    try {
      results = (await this.withRetry(() => this.api.syncBatch(request))).results;
    } catch (error) {
      // Nothing of a refused batch was applied; one no op is at fault for (an unregistered device) keeps them all.
      const next = this.batchSize.refused(error, batch.length);
      if (!next) throw error;
      return next.type === "reject" ? await this.section(() => this.rejectLocally(batch[0], next.error, report)) : new Map();
    }
    this.batchSize.answered();
    const resolutions = await this.askConflicts(batch, results);
    return await this.section(async () => {
      // A section redone on a fresh read counts again from the start (the handlers are not asked again).
      const counted = { ...report };
      const successors = await this.applyResults(batch, results, counted, resolutions);
      Object.assign(report, counted);
      return successors;
    });
  }

  /**
   * The app's answers to the batch's conflicts (onConflict), by op_id, asked outside the lock: a
   * handler may write through the client, sync, close it or wait on the user, and local writes and
   * close() go on meanwhile (close() ends the wait: TidesyncAbortedError). The conflicts' records are
   * stored first, so a write made meanwhile (the handler's own) is based on the record it was shown.
   * applyResults then rebases the answers on the outbox as it stands. Until it has, the ops stay
   * queued as sent: a client closed or killed meanwhile resends them, and its next sync asks again.
   */
  private async askConflicts(batch: PendingOp[], results: SyncOpResult[]): Promise<Map<string, ConflictResolution>> {
    checkResults(batch, results);
    const asked = await this.section(async () => {
      const conflicts: ConflictInfo[] = [];
      /** The batch's applied ops of each record so far: applyResults adds them to the base of the record's later ops. */
      const applied = new Map<string, SyncOp[]>();
      for (const result of results) {
        // Gone from the stored outbox: a client sharing the store answered it already.
        const pending = this.outbox.get(result.op_id);
        if (!pending) continue;
        const { op } = pending;
        const key = recordKey(op.collection, op.record_id);
        const outcome = outcomeOf(result);
        if (outcome === "applied") applied.set(key, [...(applied.get(key) ?? []), op]);
        if (outcome !== "conflict" || !result.record) continue;
        const baseData = (applied.get(key) ?? []).reduce<RecordData | null>((base, earlier) => earlier.type === "delete" ? null : { ...(base ?? {}), ...(earlier.data ?? {}) }, pending.base_data);
        conflicts.push({ op, server: result.record, baseData, ...(result.conflicting_fields ? { conflictingFields: result.conflicting_fields } : {}) });
      }
      const stored = await this.recordsByKey(conflicts.map(({ server }) => server));
      const newer = new Map<string, SyncRecord>();
      for (const { server } of conflicts) {
        const key = recordKey(server.collection, server.id);
        const current = newer.get(key) ?? stored.get(key);
        if (!current || server.version > current.version) newer.set(key, server);
      }
      if (newer.size > 0) await this.commit({ putRecords: [...newer.values()] });
      return conflicts;
    });
    const resolutions = new Map<string, ConflictResolution>();
    for (const conflict of asked) resolutions.set(conflict.op.op_id, await unlessAborted(this.onConflict(conflict), this.closing.signal));
    return resolutions;
  }

  /**
   * A create refused NOT_FOUND for naming a record (its list) whose own create this batch refused
   * and folded into a later op (foldRefusedCreate: the list is created by that op, after this one was
   * judged): sent again, as a new op (its op_id is the server's answered one) with the same data, after
   * that op, so the record is judged once the one it names exists. Only when nothing else of the
   * record is queued (its later ops would be judged before it). Returns that op, or null.
   */
  private behindLaterCreate(outbox: Outbox, refused: SyncOp, error: SyncOpError, createdLater: ReadonlySet<string>): PendingOp | null {
    if (error.code !== "NOT_FOUND" || refused.type !== "upsert" || refused.base_version !== null || createdLater.size === 0) return null;
    if (outbox.forRecord(refused.collection, refused.record_id).length > 0) return null;
    const names = Object.values(refused.data ?? {}).some((value) => typeof value === "string" && createdLater.has(value.toLowerCase()));
    if (!names) return null;
    const again: PendingOp = { op: { ...refused, op_id: this.newId() }, sent: false, base_data: null };
    outbox.set(again);
    return again;
  }

  /** An op the server refuses even alone (a 413, or a 400 naming it, on a one-op batch): drop it and tell the app. */
  private async rejectLocally(pending: PendingOp, error: SyncOpError, report: SyncReport): Promise<Successors> {
    const { op } = pending;
    if (!this.outbox.has(op.op_id)) return new Map(); // the other client sharing the store answered it
    // Nothing of a batch refused whole was applied: a create of a record the device holds no server
    // state of is carried on by the record's next create-style op, as in applyResults.
    const outbox = new Outbox(this.outbox.values());
    outbox.delete(op.op_id);
    const [stored] = await this.storage.getRecords([{ collection: op.collection, id: op.record_id }]);
    const folded = stored ? null : foldRefusedCreate(outbox, op);
    await this.commit({ deleteOps: [op.op_id], ...(folded ? { putOps: [folded] } : {}) }, [
      { type: "op_rejected", op, error, dropped: false, ...(folded ? { foldedInto: folded.op.op_id } : {}) },
      ...(folded ? [] : [{ type: "write_discarded" as const, reason: "rejected" as const, collection: op.collection, record_id: op.record_id, op, fields: null, error }]),
    ]);
    report.rejected++;
    return folded ? new Map([[op.op_id, folded.op.op_id]]) : new Map();
  }

  /**
   * Forgets records this user cannot see: their rows and every op still
   * queued for them (an op that loses something is reported with `reason`).
   */
  private forget(gone: Map<string, RecordRef>, outbox: Outbox, reason: (op: SyncOp) => Omit<WriteDiscardedEvent, "type" | "collection" | "record_id" | "op" | "fields"> | null) {
    // Deleting a record the storage does not hold is a no-op: no need to read it first.
    const deleteRecords = [...gone.values()];
    const deleteOps: string[] = [];
    const events: SyncEvent[] = [];
    for (const { op } of [...outbox.values()]) {
      if (!gone.has(recordKey(op.collection, op.record_id))) continue;
      outbox.delete(op.op_id);
      deleteOps.push(op.op_id);
      const why = reason(op);
      if (why) events.push({ type: "write_discarded", ...why, collection: op.collection, record_id: op.record_id, op, fields: lostFields(op) });
    }
    return { deleteRecords, deleteOps, events };
  }

  /** `results` as askConflicts checked them; `resolutions`: the app's answers to the conflicts (askConflicts), by op_id. */
  private async applyResults(batch: PendingOp[], results: SyncOpResult[], report: SyncReport, resolutions: ReadonlyMap<string, ConflictResolution>): Promise<Successors> {
    const outbox = new Outbox(this.outbox.values());
    const stored = await this.recordsByKey(batch.map((p) => ({ collection: p.op.collection, id: p.op.record_id })));
    const records = new Map<string, SyncRecord>();
    const events: SyncEvent[] = [];
    /** Records the server answered for without showing them: the user cannot see them (NOT_FOUND). */
    const unseen = new Map<string, { ref: RecordRef; error: SyncOpError }>();
    /** The op rebased from each refused one, by the refused op's id: it takes that op's place in the outbox. */
    const rebasedFor = new Map<string, string>();
    /** The later op each refused create was folded into, by the refused op's id (it keeps its own place). */
    const foldedInto = new Map<string, string>();
    /** The ids of the records whose refused create this batch folded into a later op (lower-case). */
    const createdLater = new Set<string>();
    /** `replace`: the answer's record is the server's state even if this device holds a higher version (ahead_of_server). */
    const keep = (record: SyncRecord | undefined, replace = false) => {
      if (!record) return;
      const key = recordKey(record.collection, record.id);
      unseen.delete(key);
      const current = records.get(key) ?? stored.get(key);
      if (!current || record.version > current.version || (replace && record.version !== current.version)) records.set(key, record);
    };

    for (const result of results) {
      // Gone from the stored outbox: a client sharing the store resent this op too and acted on its
      // answer already (rebased, told); acting again would queue a second rebased op and tell it twice.
      const pending = outbox.get(result.op_id);
      if (!pending) continue;
      const { op } = pending;
      const key = recordKey(op.collection, op.record_id);
      const outcome = outcomeOf(result);
      const resolution = resolutions.get(op.op_id);
      // Not asked (it was not queued then): stays sent, resent and asked at the next sync.
      if (outcome === "conflict" && result.record && !resolution) continue;
      outbox.delete(op.op_id);
      report.acknowledged++;
      if (result.status === "duplicate") report.duplicates++;

      if (outcome === "applied") {
        report.applied++;
        keep(result.record);
        // Later ops of this record were written on top of this one: their base now includes it.
        // An unsent upsert queued with no base (the record was new here when it was written) is
        // now based on the version this op wrote: it is an edit of that record, not a create, so
        // the loss of the record (deleted, or no longer visible) answers conflict or NOT_FOUND
        // instead of a create refused for missing fields, and a later local delete is sent.
        const writtenVersion = result.status === "duplicate" ? result.original_version : result.record?.version;
        for (const later of outbox.forRecord(op.collection, op.record_id)) {
          const base_data = op.type === "delete" ? null : { ...(later.base_data ?? {}), ...(op.data ?? {}) };
          const rebase = !later.sent && later.op.type === "upsert" && later.op.base_version === null && op.type === "upsert" && writtenVersion !== undefined;
          outbox.set({ ...later, base_data, ...(rebase ? { op: { ...later.op, base_version: writtenVersion } } : {}) });
        }
      } else if (outcome === "conflict" && !result.record) {
        // A repeated conflict on a record the user can no longer see: nothing to rebase on.
        report.conflicts++;
        unseen.set(key, { ref: { collection: op.collection, id: op.record_id }, error: { code: "NOT_FOUND", message: "the record is no longer visible to you" } });
        events.push({ type: "write_discarded", reason: "conflict", collection: op.collection, record_id: op.record_id, op, fields: lostFields(op) });
      } else if (outcome === "conflict") {
        report.conflicts++;
        const server = result.record!;
        keep(server);
        const fields = discardedFields(op, server, resolution!);
        // The record's ops queued behind this one (an op rebased earlier in this batch goes before it).
        const rebasedHere = new Set(rebasedFor.values());
        const later = outbox.forRecord(op.collection, op.record_id).filter((p) => !rebasedHere.has(p.op.op_id)).map((p) => p.op);
        const rebased = rebasedOp(op, server, resolution!, later, () => this.newId());
        if (rebased) {
          outbox.set({ op: rebased, sent: false, base_data: server.deleted ? null : server.data });
          rebasedFor.set(op.op_id, rebased.op_id);
        }
        events.push({ type: "conflict", op, server, resolution: resolution!, rebasedOpId: rebased?.op_id ?? null });
        if (fields === null || fields.length > 0) {
          events.push({ type: "write_discarded", reason: "conflict", collection: op.collection, record_id: op.record_id, op, fields, server });
        }
      } else {
        report.rejected++;
        const error: SyncOpError = result.error ?? { code: "VALIDATION_FAILED", message: "the server rejected this op" };
        // The local row shows the server's record again (this op no longer applies on top). Refused
        // as ahead_of_server, the device holds a version the server no longer has (a restored
        // database): the server's record replaces it, and the record's unsent ops are based on it.
        const ahead = error.details?.some((detail) => detail.code === "ahead_of_server") === true;
        keep(result.record, ahead);
        if (ahead && result.record) for (const later of rebasedOnRestored(outbox, result.record)) outbox.set(later);
        // A create of a record the server holds nothing of, written again since: the later write
        // carries its data on (foldRefusedCreate), and nothing written is lost unless that is refused too.
        const unknownToServer = !result.record && !(records.get(key) ?? stored.get(key));
        const folded = unknownToServer ? foldRefusedCreate(outbox, op) ?? this.behindLaterCreate(outbox, op, error, createdLater) : null;
        if (folded) createdLater.add(op.record_id.toLowerCase());
        const rejected = rejectedEvent(op, error, result.record, folded?.op.op_id);
        if (rejected.dropped) unseen.set(key, { ref: { collection: op.collection, id: op.record_id }, error });
        events.push(rejected);
        if (folded) foldedInto.set(op.op_id, folded.op.op_id);
        else events.push({ type: "write_discarded", reason: "rejected", collection: op.collection, record_id: op.record_id, op, fields: null, error });
      }
    }

    const refs = new Map([...unseen].map(([key, { ref }]) => [key, ref]));
    const forgotten = this.forget(refs, outbox, (op) => ({ reason: "rejected", error: unseen.get(recordKey(op.collection, op.record_id))?.error }));
    for (const { collection, id } of forgotten.deleteRecords) records.delete(recordKey(collection, id));
    // A rebased op goes where the op it replaces was, ahead of the ops queued after that one (client/outbox.ts).
    const inPlace = [...this.outbox.keys()].map((opId) => rebasedFor.get(opId) ?? opId);
    const order = [...new Set([...inPlace, ...outbox.keys()])].flatMap((opId) => outbox.get(opId) ?? []);
    await this.commit({
      deleteRecords: forgotten.deleteRecords,
      putRecords: [...records.values()],
      ...outboxChange(this.outbox.values(), order),
    }, [...events, ...forgotten.events]);
    return new Map([...rebasedFor, ...foldedInto]);
  }

  // -------------------------------------------------------------------- pull
  /** The page size to ask for: the app's, at most what the server published (a larger one is refused on every retry). */
  private pullLimit(): number | undefined {
    return pullLimitOf(this.options.pullLimit, this.catalog?.schema.limits?.max_pull_limit);
  }

  /** Where the store's pull stood when this client last read or changed it. */
  private position(): PullPosition {
    return pullPosition(this.cursor, this.reset);
  }

  /**
   * The `collections` filter to pull with. A cursor is bound to the filter it was issued for (with
   * another, 400 INVALID_CURSOR: a full sync), and a store has one pull, whichever client sharing it
   * moves it (an app's client of every collection, its background task's of some). So a client
   * pulls with the filter the store's cursors were issued for when that filter takes in all of its
   * own collections: it then also applies the other collections' changes, which the store holds
   * anyway. Else (no filter recorded, a filter that adds collections, as after an app upgrade, or
   * one naming a collection the server no longer publishes) it pulls with its own: a cursor issued
   * for another filter is refused once, and the full sync makes its filter the store's.
   */
  private pullFilter(): string[] | null {
    const own = this.ownCollections()?.served ?? null;
    const stored = this.pullCollections;
    if (stored === undefined) return own;
    const covers = stored === null || (own !== null && own.every((collection) => stored.includes(collection)));
    const served = stored === null || this.catalog === null || stored.every((collection) => this.catalog!.has(collection));
    return covers && served ? stored : own;
  }

  /**
   * The app's `collections` (null: all), split by the schema fetched in this session: a filter
   * naming a collection the server does not sync is refused (400 VALIDATION_FAILED, not retryable)
   * on every pull, so only the `served` ones are pulled. A stored schema (not fetched yet) may
   * predate a collection the server added: it leaves every name served.
   */
  private ownCollections(): { served: string[]; unserved: string[] } | null {
    const wanted = this.options.collections?.length ? [...this.options.collections] : null;
    if (wanted === null) return null;
    const catalog = this.schemaFetched ? this.catalog : null;
    if (catalog === null) return { served: wanted, unserved: [] };
    return { served: wanted.filter((name) => catalog.has(name)), unserved: wanted.filter((name) => !catalog.has(name)) };
  }

  /**
   * Pulls until up to date. A page applies only if the store's pull still stands where it was
   * requested from (`ifPull`): a client sharing the store (an app and its background task) may have
   * pulled meanwhile, or begun a full sync, and what it stored stands. This client then drops its
   * page and goes on from where the store's pull stands, the other's full sync included.
   */
  private async pull(report: SyncReport): Promise<void> {
    // None of the app's `collections` is synced (told by collections_unavailable): nothing to pull,
    // rather than everything, which an empty filter would ask for.
    if (this.ownCollections()?.served.length === 0) return;
    let resynced = false;
    /** Collections of this pull's changes that the server's schema as last fetched did not name. */
    const unknown = new Set<string>();
    /** The full sync this call began (its id), if any: one it carried on began before it (resumed, or another client's). */
    let begunHere: string | null = null;
    for (let from = this.position(); ; from = this.position()) {
      // Read with `from` (no await between): the filter that position's cursor was issued for.
      const collections = this.pullFilter();
      let page: ChangesResponse;
      try {
        page = await this.withRetry(() => this.api.syncChanges({ cursor: from.cursor ?? undefined, limit: this.pullLimit(), collections: collections ?? undefined }));
      } catch (error) {
        // 410: the cursor is older than the server keeps. 400 INVALID_CURSOR: the
        // server no longer accepts it (its cursor secret rotated, or the stored
        // cursor belongs to another account). Either way, pull from scratch.
        const reason = error instanceof TidesyncApiError && (error.code === "RESYNC_REQUIRED" || error.code === "INVALID_CURSOR")
          ? error.code
          : null;
        if (!reason || resynced) throw error;
        // Local records stay (the full pull corrects them); the outbox is untouched. Unless another
        // client moved the pull meanwhile: then this cursor is not the store's, and it goes on from there.
        const restarted = await this.section(async () => {
          if (!samePosition(this.position(), from)) return false;
          await this.commit({ cursor: null, reset: null, ifPull: from }, [{ type: "resync", reason }]);
          return true;
        });
        if (restarted) {
          resynced = true;
          report.resynced = true;
        }
        continue;
      }
      for (const { collection } of page.changes) if (this.catalog && !this.catalog.has(collection)) unknown.add(collection);
      const applied = await this.section(() => this.applyPage(page, from, collections));
      if (!applied) continue;
      if (from.reset === null && this.reset !== null) begunHere = this.reset.id;
      report.pulled += page.changes.length;
      if (page.has_more) continue;
      if (this.reset === null) break;
      // A full sync's last page: drop what it did not list, unless another client moved the pull meanwhile.
      const finishing = this.reset.id;
      if (!(await this.finishReset())) continue;
      // One that began before this call (interrupted, then resumed; or another client's) kept what its
      // earlier pages listed, and what changed since they were read (a list the user lost, a row
      // deleted) comes as removals after its cursor: pulled now, so that this sync() ends up to date.
      if (finishing === begunHere) break;
    }
    // The server began syncing a collection after this client fetched its schema (a deploy while the
    // app runs): fetch it again, so that the app can write what it now reads (the checks refuse a
    // collection a fetched schema does not name). Once per collection: a server whose GET /v1/meta
    // still does not name it is not asked at every sync.
    const unasked = [...unknown].filter((collection) => !this.schemaRefreshedFor.has(collection));
    if (unasked.length > 0) {
      await this.refreshSchema();
      for (const collection of unasked) this.schemaRefreshedFor.add(collection);
    }
  }

  /**
   * Applies one page requested from `from` with the filter `collections`, if the store's pull still
   * stands there (else false, nothing applied: a stale page, whose removals would drop what a newer
   * page brought back). The filter is stored with the page's cursor, which is bound to it. Pages
   * of a full sync mark what they list and keep their cursor with the running full sync (`reset`),
   * not as the stored cursor; finishReset then drops what it did not list and stores the cursor.
   */
  private async applyPage(page: ChangesResponse, from: PullPosition, collections: string[] | null): Promise<boolean> {
    if (!samePosition(this.position(), from)) return false;
    // A full sync lists every record the user may see and no removals: what it does not list is gone.
    // The server marks its first page (reset); a server from before the flag is known by the missing cursor.
    const begins = page.reset === true || (from.reset === null && from.cursor === null);
    const full = begins || from.reset !== null;
    const stored = await this.recordsByKey(page.changes);
    const records = new Map<string, SyncRecord>();
    /** Records gone for this user, with why: deleted, or access revoked. */
    const gone = new Map<string, { ref: RecordRef; reason: "deleted" | "access_revoked" }>();
    for (const change of page.changes) {
      const key = recordKey(change.collection, change.id);
      if (change.deleted) {
        // Always applies: a removal may carry the very version this device holds.
        records.delete(key);
        gone.set(key, { ref: { collection: change.collection, id: change.id }, reason: change.reason ?? "deleted" });
        continue;
      }
      gone.delete(key);
      const current = records.get(key) ?? stored.get(key);
      // A full sync lists the server's state: it replaces whatever differs, a higher local version
      // too (written after the restore point of a restored database, docs/sync.md "Restores").
      if (!current || change.version > current.version || (full && !sameRecord(change, current))) records.set(key, change);
    }
    const forgotten = this.forgetGone(gone);
    const putOps = full ? [...records.values()].flatMap((record) => rebasedOnRestored(this.outbox, record)) : [];
    // The full sync gets an id when it begins, so that a client whose full sync another one's superseded knows.
    const position: StorageChange = full
      ? {
        ...(begins ? { beginReset: true } : {}),
        reset: { id: begins ? this.newId() : from.reset!, cursor: page.cursor },
        markListed: page.changes.map(({ collection, id }) => ({ collection, id })),
      }
      : { cursor: page.cursor };
    await this.commit({
      ...position,
      pullCollections: collections,
      ifPull: from,
      deleteRecords: forgotten.deleteRecords,
      putRecords: [...records.values()],
      deleteOps: forgotten.deleteOps,
      putOps: putOps.filter((p) => !forgotten.deleteOps.includes(p.op.op_id)),
    }, forgotten.events);
    return true;
  }

  /**
   * After a full sync's last page: drops the records it did not list (a page at a time), then stores
   * its last page's cursor and ends it. Each step applies only while the store's pull still stands
   * there: false when another client moved it (began another full sync, whose marks are not this
   * one's, or ended this one), and the pull goes on from where it stands.
   *
   * A record with writes still queued stays, with them, until the server answers
   * them (the next push): not being listed says the user could not see it when the last page was
   * read, not why, nor whether that still holds (access taken away and given back, a record moved
   * out of view and back). The push checks each op against the record as it stands: NOT_FOUND
   * drops it then (told as `rejected`), a deleted one answers a conflict with its tombstone, and a
   * write the server takes is kept. Checking costs nothing here: the outbox is in memory.
   */
  private async finishReset(): Promise<boolean> {
    const at = this.position();
    for (;;) {
      const step = await this.section(async () => {
        if (!samePosition(this.position(), at)) return "moved";
        // The collections the full sync listed: those of the filter its pages were pulled with.
        const collections = this.pullCollections === undefined ? (this.options.collections ?? null) : this.pullCollections;
        const unlisted = await this.storage.unlistedRecords(collections, PAGE);
        if (unlisted.length === 0) {
          await this.commit({ cursor: at.cursor, reset: null, ifPull: at });
          return "done";
        }
        const queued = new Set([...this.outbox.values()].map(({ op }) => recordKey(op.collection, op.record_id)));
        const awaitingAnswers = unlisted.filter((ref) => queued.has(recordKey(ref.collection, ref.id)));
        // Not listed by a full pull, nothing queued: deleted, or no longer visible to this user.
        const forgotten = this.forgetGone(new Map(unlisted
          .filter((ref) => !queued.has(recordKey(ref.collection, ref.id)))
          .map((ref) => [recordKey(ref.collection, ref.id), { ref, reason: "deleted" as const }])));
        // Marked as listed, so that the sweep moves on past them.
        await this.commit({ ifPull: at, markListed: awaitingAnswers, deleteRecords: forgotten.deleteRecords, deleteOps: forgotten.deleteOps }, forgotten.events);
        return "swept";
      });
      if (step !== "swept") return step === "done";
    }
  }

  /** forget() for records a pull says are gone, with the reason each loses its queued ops for. */
  private forgetGone(gone: Map<string, { ref: RecordRef; reason: "deleted" | "access_revoked" }>) {
    const outbox = new Outbox(this.outbox.values());
    // Every dropped op is reported, a delete too: a removal does not say whether
    // the row was deleted or moved to a list this user cannot see, and a moved
    // row may come back into view, undeleted (seen in the convergence suite).
    return this.forget(new Map([...gone].map(([key, { ref }]) => [key, ref])), outbox, (op) => ({
      reason: gone.get(recordKey(op.collection, op.record_id))!.reason,
    }));
  }
}

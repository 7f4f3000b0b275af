// RxDB ↔ tidesync: the pull and push options of `replicateRxCollection` for
// one collection (client/README.md shows the setup; docs/sync.md is the
// protocol), with what the obvious mapping gets wrong done right:
// - RxDB does not store the checkpoint of an empty page, so a device whose
//   pulls were all empty would start over with a cursor-less full sync (which
//   lists no tombstones). The cursor of an empty page is kept here, next to
//   the RxDB checkpoint it follows, and used while RxDB still holds that one.
// - After `410 RESYNC_REQUIRED` (or a lost cursor) the full sync removes the
//   documents it did not list (documents created here and never acknowledged
//   stay: they are still to be pushed).
// - Push: a durable outbox of sent ops (RxDB local documents), so a retry
//   re-sends the same op_ids; every op gets its own answer. Conflicts are
//   rebased by the server's rules and rejected ops are surfaced as events,
//   never handed back to RxDB as conflicts (RxDB would push them again, in a
//   loop, until 429); the documents they touched get the server's state by
//   the next pull, like any remote change (asked for on the pull stream once
//   RxDB has recorded the push, else it would skip them as locally changed);
//   they are kept until RxDB has stored the page that handed them over (its
//   checkpoint names them): an app killed before gets them again.
//   A push cut short after some batches were answered is retried by RxDB
//   with all its rows: the answered ops stand for those (not sent, nor told,
//   again), and their corrections come with the push that completes it.
// - A page pulled while a push is under way may list a record of the push in
//   its new state (read after the push's commit): RxDB skips it (the document
//   still differs from the master state it assumes) and moves its checkpoint
//   past it, and the push's answer then makes it assume the document as it
//   was sent. Such records go to RxDB again, as corrections, once the push is
//   recorded (no later pull would list them).
// - RxDB records a push only after the handler returns: an app killed once the
//   server applied it hands the same documents over again, a create as a create.
//   The versions the server gave creates are kept (a local document) until RxDB
//   holds a server state of them, so such a create refused unjudged (a 413) is
//   looked up, not removed as one the server never stored, and its delete is sent.
// - Retry-After is honoured by every later request, also RxDB's own retries.
// - RxDB pushes each collection on its own: the replications of one database
//   share an RxdbPushOrder, which holds a collection's push until its parents
//   are in sync and its deletes until every collection is, then sends every
//   collection's in one push (push-order.ts).
// - The collection belongs to the user whose token its first request went
//   out with: a request under another user's token is refused unsent
//   (TidesyncStoreOwnerError, core/owner-guard.ts). cancel() (RxDB's, also on
//   the database's close()) aborts the pull and push under way and resolves
//   once nothing more is sent or written: the unanswered ops stay stored.
// The collection needs `localDocuments: true` and a number field for the
// server version (default `server_version`).
import type { ReplicationPullOptions, ReplicationPushOptions, RxCollection, RxReplicationPullStreamItem, RxReplicationWriteToMasterRow, WithDeleted } from "rxdb";
import { replicateRxCollection, type RxReplicationState } from "rxdb/plugins/replication";
import { firstValueFrom, Subject } from "rxjs";
import { filter } from "rxjs/operators";
import type { SyncOp, SyncRecord } from "../../../functions/_shared/schemas/sync.ts";
import { TidesyncAbortedError } from "../../api-error.ts";
import { pullLimitOf } from "../../batching.ts";
import { jsonEqual } from "../../rebase.ts";
import type { RecordData } from "../../storage.ts";
import type { KeyValueStore } from "../core/key-value.ts";
import { type AdapterOptions, opIds } from "../core/options.ts";
import { type LocalChange, planOps, unsendableId } from "../core/plan-ops.ts";
import { pullPage } from "../core/pull-page.ts";
import { callListener } from "../../listeners.ts";
import { Mutex } from "../../mutex.ts";
import { type AppliedUpsert, type Correction, type PushContext, pushedOps, pushOps } from "../core/push-ops.ts";
import { ownerGuarded } from "../core/owner-guard.ts";
import { loadServerMeta, type ServerMeta, type WritableFields } from "../core/server-meta.ts";
import { HELD_DELETES_KEY, heldDeletesToSend, type OrderedReplication, RxdbPushOrder } from "./push-order.ts";

export { RxdbPushOrder } from "./push-order.ts";

/** What RxDB stores after each non-empty page. */
export interface TidesyncCheckpoint {
  cursor: string;
  /** The page belongs to a full sync still in progress. */
  full: boolean;
  /** The page handed RxDB push corrections (HandedCorrections.page): RxDB stored it, they are done. */
  corrections?: string;
}

/** The push corrections a page handed RxDB (the first `count` stored), kept until RxDB has stored that page. */
interface HandedCorrections {
  page: string;
  count: number;
}

/** The cursor of an empty page, and the checkpoint RxDB held when it was read. */
interface EmptyPageCursor {
  cursor: string;
  after: string | null;
}

const EMPTY_PAGE_CURSOR_KEY = "tidesync.empty_page_cursor";
/** Push answers that overrule local documents, until a page that handed them to RxDB is stored. */
const CORRECTIONS_KEY = "tidesync.corrections";
/** The corrections the last page that carried any handed RxDB, until RxDB has stored that page (HandedCorrections). */
const HANDED_KEY = "tidesync.corrections.handed";
/** The records pages pulled during a push listed, until the push's corrections hold them (pulledDuringPush). */
const PULLED_DURING_PUSH_KEY = "tidesync.pulled_during_push";
/** The versions of creates the server applied, until RxDB holds a server state of their documents (acknowledgedCreates). */
const ACKNOWLEDGED_KEY = "tidesync.acknowledged_creates";
/** RxDB's own fields of a document, never sent. */
const RXDB_FIELDS = new Set(["_deleted", "_meta", "_rev", "_attachments"]);

type Doc = WithDeleted<Record<string, unknown>>;

export interface RxdbTidesyncOptions extends AdapterOptions {
  /** RxDB's replication identifier (its checkpoint and push state are stored under it). */
  replicationIdentifier: string;
  /** Default true: pushes local writes as they happen and pulls when asked (reSync) or poked. */
  live?: boolean;
  /** ms before RxDB retries a failed pull or push (Retry-After still holds). Default 5000. */
  retryTime?: number;
  /** The RxDB collection; created with `localDocuments: true`. Its primary key is the record id (a lower-case uuid). */
  collection: RxCollection<Record<string, unknown>>;
  /** The server's collection name. */
  name: string;
  /** The number field documents keep their server version in. Default `server_version`. */
  versionField?: string;
  /**
   * One per database, shared by its replications: the collections, parents
   * first (`new RxdbPushOrder(["lists", "list_members", "tasks"])`). Upserts
   * go parents first, then deletes children first. Default: this collection alone.
   */
  order?: RxdbPushOrder;
  /** Documents per RxDB pull and push batch (default 100); the server is asked for pages of at most its max_pull_limit. */
  batchSize?: number;
}

export interface RxdbTidesync {
  /** RxDB's replication, running with the tidesync pull and push handlers. */
  state: RxReplicationState<Record<string, unknown>, TidesyncCheckpoint>;
  /** Resolves once RxDB is in sync, the held-back deletes are sent and every push answer is in the collection (use instead of state.awaitInSync()). */
  awaitInSync(): Promise<void>;
}

/** RxDB local documents of the collection as the adapters' key-value store (values wrapped: local documents are objects). */
function localStore(collection: RxCollection<Record<string, unknown>>): KeyValueStore {
  return {
    get: async <T>(key: string) => ((await collection.getLocal<{ value: T }>(key))?.get("value") as T | undefined) ?? undefined,
    set: async (key, value) => {
      await collection.upsertLocal(key, { value });
    },
  };
}

export function replicateTidesync(options: RxdbTidesyncOptions): RxdbTidesync {
  const { collection, name } = options;
  const versionField = options.versionField ?? "server_version";
  const batchSize = options.batchSize ?? 100;
  const store = localStore(collection);
  /** Aborted when the replication is cancelled: no request is sent after it, nor anything written. */
  const closing = new AbortController();
  const { api, retry } = ownerGuarded(options, store, closing.signal);
  const newId = opIds(options);
  const order = options.order ?? new RxdbPushOrder([name]);
  /**
   * One push at a time on the collection's outbox (RxDB may call the handler for several batches
   * at once); every write of the adapter's own state goes through it, and none starts once cancelled.
   */
  const outbox = new Mutex();
  const exclusive = <T>(work: () => Promise<T>): Promise<T> =>
    outbox.run(() => {
      if (closing.signal.aborted) throw new TidesyncAbortedError();
      return work();
    });
  const stream = new Subject<RxReplicationPullStreamItem<Record<string, unknown>, TidesyncCheckpoint>>();
  let meta: ServerMeta | null = null;
  /** GET /v1/meta, read once (the pull's page size, the push's fields and bounds). */
  const serverMeta = async (): Promise<ServerMeta> => (meta ??= await loadServerMeta(api, retry, options));
  /** Records listed so far by the full sync in progress (null: none in progress in this process). */
  let fullSyncSeen: Set<string> | null = null;
  /** Pushes under way (their answers not yet handed back to RxDB). */
  let pushing = 0;
  /**
   * The newest state of each record listed by a page pulled while a push was under way, mirrored in
   * the store until the push's corrections hold them (an app killed before still hands them over).
   */
  const pulledDuringPush = new Map<string, SyncRecord>();
  /** Those an earlier run of the app mirrored, merged in (the mirror is written only after). */
  const pulledLoaded = store.get<SyncRecord[]>(PULLED_DURING_PUSH_KEY).then((records) => {
    for (const record of records ?? []) if ((pulledDuringPush.get(record.id)?.version ?? -1) < record.version) pulledDuringPush.set(record.id, record);
  });
  // (Its failure is thrown where it is awaited, not as an unhandled rejection of a replication never used.)
  pulledLoaded.catch(() => {});
  /** The mirror's writes, one at a time, each of the map as it is then: the last one holds the last change. */
  let pulledSaved: Promise<void> = Promise.resolve();
  const savePulled = (): Promise<void> =>
    (pulledSaved = pulledSaved.catch(() => {}).then(async () => {
      await pulledLoaded;
      if (closing.signal.aborted) throw new TidesyncAbortedError();
      await store.set(PULLED_DURING_PUSH_KEY, [...pulledDuringPush.values()]);
    }));
  /** Records whose state pulled during a push is to go to RxDB again: the newest version a pull has listed since (an older correction is stale). */
  const redelivering = new Map<string, number>();

  const removal = async (id: string): Promise<Doc> => {
    const local = await collection.findOne(id).exec();
    return { ...((local?.toJSON() as Record<string, unknown> | undefined) ?? {}), [collection.schema.primaryPath]: id, _deleted: true };
  };
  const toDoc = async (record: SyncRecord): Promise<Doc> =>
    record.deleted || record.data === null ? await removal(record.id) : { ...record.data, [collection.schema.primaryPath]: record.id, [versionField]: record.version, _deleted: false };

  const pull: ReplicationPullOptions<Record<string, unknown>, TidesyncCheckpoint> = {
    batchSize,
    stream$: stream.asObservable(),
    async handler(checkpoint: TidesyncCheckpoint | undefined) {
      // A full sync interrupted by a restart starts over: what it had listed is not known any more.
      let full = checkpoint?.full === true && fullSyncSeen !== null;
      let cursor: string | null = full || checkpoint?.full !== true ? (checkpoint?.cursor ?? null) : null;
      const empty = await store.get<EmptyPageCursor>(EMPTY_PAGE_CURSOR_KEY);
      if (empty && empty.after === (checkpoint?.cursor ?? null) && !full) cursor = empty.cursor;
      const docs = new Map<string, Doc>();
      // RxDB asks for the next page once it stored the last one (the checkpoint it passes names it):
      // the corrections that page handed are done. Until then they go again (an app killed before
      // RxDB stored the page), judged against what this pull brings, as they were then.
      const handed = await store.get<HandedCorrections | null>(HANDED_KEY);
      if (handed && checkpoint?.corrections === handed.page) {
        await exclusive(async () => {
          const now = (await store.get<Correction[]>(CORRECTIONS_KEY)) ?? [];
          await store.set(CORRECTIONS_KEY, now.slice(handed.count));
          await store.set(HANDED_KEY, null);
        });
      }
      const corrections = (await store.get<Correction[]>(CORRECTIONS_KEY)) ?? [];
      // The pages asked for are at most max_pull_limit (a larger limit is refused on every retry).
      const limit = pullLimitOf(batchSize, (await serverMeta()).maxPullLimit);
      for (;;) {
        const pulled = await pullPage(api, { cursor, collections: [name], limit }, retry);
        // Read while a push is under way: RxDB may skip its records of the push (see keepPulledDuringPush).
        const duringPush = pushing > 0;
        if (pulled.full) {
          full = true;
          fullSyncSeen = new Set();
          docs.clear();
        }
        if (pulled.resync) callListener(options.onEvent, { type: "resync", reason: pulled.resync });
        for (const change of pulled.page.changes) {
          fullSyncSeen?.add(change.id);
          if (duringPush && (pulledDuringPush.get(change.id)?.version ?? -1) < change.version) pulledDuringPush.set(change.id, change);
          if ((redelivering.get(change.id) ?? Infinity) < change.version) redelivering.set(change.id, change.version);
          docs.set(change.id, await toDoc(change));
        }
        if (duringPush && pulled.page.changes.length > 0) await savePulled();
        cursor = pulled.page.cursor;
        if (!pulled.page.has_more) break;
        if (docs.size >= batchSize) return { documents: [...docs.values()], checkpoint: { cursor, full } };
      }
      if (full) {
        // The full sync is complete: what it did not list is gone for this user (never-pushed documents are still to go up).
        const seen = fullSyncSeen ?? new Set<string>();
        for (const doc of await collection.find().exec()) {
          const id = doc.primary;
          if (!seen.has(id) && doc.get(versionField) != null && !docs.has(id)) docs.set(id, await removal(id));
        }
        fullSyncSeen = null;
      }
      // Push answers that overrule local documents, unless this pull brought something newer (a removal always is).
      for (const correction of corrections) {
        const pulled = docs.get(correction.id);
        if (pulled && (pulled._deleted || !correction.record || (pulled[versionField] as number) > correction.record.version)) continue;
        // An earlier pull (this process) already handed RxDB a newer state.
        if (correction.record && (redelivering.get(correction.id) ?? -1) > correction.record.version) continue;
        docs.set(correction.id, correction.record ? await toDoc(correction.record) : await removal(correction.id));
      }
      for (const correction of corrections) redelivering.delete(correction.id);
      /** Names this page while it hands corrections: they are dropped once RxDB stored it (a page with no documents is not stored). */
      const page = corrections.length > 0 && docs.size > 0 ? newId() : null;
      await exclusive(async () => {
        if (page) await store.set(HANDED_KEY, { page, count: corrections.length } satisfies HandedCorrections);
        else if (corrections.length > 0) {
          // None to hand over (each overruled by what this pull brought): done.
          const now = (await store.get<Correction[]>(CORRECTIONS_KEY)) ?? [];
          await store.set(CORRECTIONS_KEY, now.slice(corrections.length));
          await store.set(HANDED_KEY, null);
        }
        // RxDB stores no checkpoint for an empty page: keep this cursor ourselves.
        if (docs.size === 0) await store.set(EMPTY_PAGE_CURSOR_KEY, { cursor, after: checkpoint?.cursor ?? null } satisfies EmptyPageCursor);
      });
      if (docs.size === 0) return { documents: [], checkpoint: checkpoint };
      return { documents: [...docs.values()], checkpoint: { cursor, full: false, ...(page ? { corrections: page } : {}) } };
    },
  };

  const pushContext = (meta: ServerMeta): PushContext => ({
    api,
    installationId: options.installationId,
    store,
    retry,
    newId,
    emit: (event) => options.onEvent?.(event),
    bounds: meta.bounds,
    pullLimit: pullLimitOf(batchSize, meta.maxPullLimit),
    onConflict: options.onConflict,
  });
  /**
   * Stores the push's corrections, and the records it sent that a page pulled meanwhile listed (RxDB
   * skipped them as locally changed and moved past them): the newer state of each goes to RxDB.
   * Then the pulled records are dropped (those of records it did not send too).
   */
  const keepPushCorrections = async (corrections: Correction[], sent: Set<string>): Promise<void> => {
    await pulledLoaded;
    const taken = new Map(pulledDuringPush);
    const pulled = new Map([...taken].filter(([id]) => sent.has(id)));
    const result = corrections.map((correction) => {
      const record = pulled.get(correction.id);
      pulled.delete(correction.id);
      return record && correction.record && record.version > correction.record.version ? { ...correction, record } : correction;
    });
    for (const record of pulled.values()) result.push({ collection: name, id: record.id, record });
    for (const correction of result) if (correction.record) redelivering.set(correction.id, Math.max(redelivering.get(correction.id) ?? -1, correction.record.version));
    await keepCorrections(result);
    // (A page pulled meanwhile may have listed a newer state: kept for the next push.)
    for (const [id, record] of taken) if (pulledDuringPush.get(id) === record) pulledDuringPush.delete(id);
    if (taken.size > 0) await savePulled();
  };
  /** The answers that overrule local documents reach the collection by a pull. */
  const keepCorrections = async (corrections: Correction[]) => {
    if (corrections.length === 0) return;
    await store.set(CORRECTIONS_KEY, [...((await store.get<Correction[]>(CORRECTIONS_KEY)) ?? []), ...corrections]);
    delivery = deliverCorrections();
  };

  /**
   * The versions the server gave creates RxDB assumes no server state of (it records a push only
   * after the handler returns: an app killed in between hands them over again as creates), by id,
   * without those RxDB now holds a server state of (a row based on one, or a pulled version).
   */
  const acknowledgedCreates = async (rows: RxReplicationWriteToMasterRow<Record<string, unknown>>[]): Promise<Record<string, number>> => {
    const stored = (await store.get<Record<string, number>>(ACKNOWLEDGED_KEY)) ?? {};
    const ids = Object.keys(stored);
    if (ids.length === 0) return stored;
    const docs = await collection.findByIds(ids).exec();
    const assumed = new Set(rows.filter((row) => row.assumedMasterState !== undefined).map((row) => String(row.newDocumentState[collection.schema.primaryPath])));
    const kept = Object.fromEntries(Object.entries(stored).filter(([id]) => !assumed.has(id) && docs.get(id)?.get(versionField) == null));
    if (Object.keys(kept).length !== ids.length) await store.set(ACKNOWLEDGED_KEY, kept);
    return kept;
  };

  const push: ReplicationPushOptions<Record<string, unknown>> = {
    batchSize,
    async handler(rows: RxReplicationWriteToMasterRow<Record<string, unknown>>[]) {
      await order.beforeUpserts(name);
      const server = await serverMeta();
      await exclusive(async () => {
        const acknowledged = await acknowledgedCreates(rows);
        const changes = rows.flatMap((row) => localChange(row, collection.schema.primaryPath, versionField, name, server.writable, acknowledged)).filter((change) => {
          const refused = unsendableId(change, newId());
          if (refused) callListener(options.onEvent, refused);
          return refused === null;
        });
        const held = (await store.get<SyncOp[]>(HELD_DELETES_KEY)) ?? [];
        // RxDB hands the rows of a push that failed over again, also those whose ops were answered (pushedOps).
        const standing = await pushedOps(store);
        const ops = planOps([...standing, ...held], changes, newId);
        // A delete waits, and so does a later write of its record (re-created since): behind it.
        const waiting = new Set(held.map((op) => op.record_id));
        const later = ops.filter((op) => op.type === "delete" || waiting.has(op.record_id));
        if (later.length > 0) {
          // Stored before RxDB is told they are pushed; sent once every collection's upserts are.
          await store.set(HELD_DELETES_KEY, [...held, ...later]);
          order.sendDeletes();
        }
        // Their deletes carry the versions now (held, or an earlier delete of theirs).
        const deleted = changes.filter((change) => change.type === "delete" && acknowledged[change.id] !== undefined);
        if (deleted.length > 0) await store.set(ACKNOWLEDGED_KEY, Object.fromEntries(Object.entries(acknowledged).filter(([id]) => !deleted.some((change) => change.id === id))));
        // A document RxDB assumes no server state of was never acknowledged, unless the server applied its
        // create (acknowledged) before RxDB recorded it: else the server cannot hold it.
        const unassumed = new Set(rows.filter((row) => row.assumedMasterState === undefined).map((row) => String(row.newDocumentState[collection.schema.primaryPath])));
        const neverStored = new Set([...unassumed].filter((id) => acknowledged[id] === undefined).map((id) => `${name}/${id}`));
        const onApplied = async (applied: AppliedUpsert[]) => {
          const creates = applied.filter((upsert) => unassumed.has(upsert.id) && !upsert.record.deleted);
          if (creates.length === 0) return;
          const now = (await store.get<Record<string, number>>(ACKNOWLEDGED_KEY)) ?? {};
          for (const { id, record } of creates) now[id] = Math.max(now[id] ?? 0, record.version);
          await store.set(ACKNOWLEDGED_KEY, now);
        };
        const sent = ops.filter((op) => !later.includes(op));
        // The records of the push: its new ops', and those of ops an earlier attempt sent (the push it completes).
        const sentIds = new Set([...standing, ...sent].map((op) => op.record_id));
        pushing++;
        try {
          // The corrections are stored before the answered ops are dropped: a kill in between sends nothing again.
          await pushOps({ ...pushContext(server), neverStored, onApplied, keepCorrections: (corrections) => keepPushCorrections(corrections, sentIds) }, sent);
        } finally {
          pushing--;
        }
      });
      // Never a conflict for RxDB: every answer was handled above.
      return [];
    },
  };

  const state = replicateRxCollection<Record<string, unknown>, TidesyncCheckpoint>({
    collection,
    replicationIdentifier: options.replicationIdentifier,
    live: options.live ?? true,
    retryTime: options.retryTime,
    pull,
    push,
  });
  /** The pull that hands the push's corrections to RxDB, while one is due. */
  let delivery: Promise<void> | null = null;
  const canceled = firstValueFrom(state.canceled$.pipe(filter((value) => value === true)));
  // Run by RxDB's cancel() (and the database's close()), which resolves after it: the request under
  // way is abandoned, and once the push or write in progress has ended nothing more is sent or
  // written (exclusive refuses). Unanswered ops stay stored, for the next replication to send.
  state.onCancel.push(() => {
    closing.abort();
    return outbox.run(async () => {});
  });

  /** RxDB in sync and the push's corrections delivered (held-back deletes aside), or the replication cancelled. */
  async function idle(): Promise<void> {
    for (;;) {
      await Promise.race([state.awaitInSync(), canceled]);
      if (state.isStopped()) return;
      const due = delivery;
      if (due === null) return;
      await due;
      if (delivery === due) delivery = null;
    }
  }

  const member: OrderedReplication = {
    idle,
    stopped: () => closing.signal.aborted || state.isStopped(),
    reportError: (error) => state.subjects.error.next(error as never),
    retryMs: options.retryTime ?? 5000,
    exclusive,
    store,
    pushContext: async () => pushContext(await serverMeta()),
    keepCorrections,
  };
  order.join(name, member);
  void canceled.then(() => order.leave(name, member));
  // Deletes held back before a restart, or a send of them to complete.
  void heldDeletesToSend(store).then((held) => {
    if (held) order.sendDeletes();
  });

  /** Once RxDB has recorded the push (it is idle), a pull brings the corrections (cancelled: the next replication's first pull). */
  async function deliverCorrections(): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, 0));
    // Cancelled, active$ completes without a value: the default ends the wait (not an EmptyError nobody handles).
    await firstValueFrom(state.active$.pipe(filter((active) => !active)), { defaultValue: false });
    if (state.isStopped()) return;
    stream.next("RESYNC");
    await new Promise((resolve) => setTimeout(resolve, 0));
    await Promise.race([state.awaitInSync(), canceled]);
  }

  return {
    state,
    async awaitInSync() {
      for (;;) {
        await idle();
        await order.awaitDeletes();
        if (delivery === null) return;
      }
    },
  };
}

/**
 * A push row as a change: a create, the fields that differ from the server's state RxDB assumes, or a delete.
 * A field the document no longer holds (left out, or undefined) is cleared: sent as null (the server refuses
 * it, told as op_rejected, for a column that is not nullable). A document RxDB assumes no server state of whose
 * create the server applied (`acknowledged`, by id: its version) is a create again, and its delete is sent.
 */
function localChange(
  row: RxReplicationWriteToMasterRow<Record<string, unknown>>,
  primary: string,
  versionField: string,
  name: string,
  writable: WritableFields,
  acknowledged: Readonly<Record<string, number>>,
): LocalChange[] {
  const next = row.newDocumentState as Record<string, unknown>;
  const assumed = row.assumedMasterState as Record<string, unknown> | undefined;
  const id = String(next[primary]);
  const baseVersion = (assumed?.[versionField] as number | null | undefined) ?? null;
  if (next._deleted) {
    if (!assumed && acknowledged[id] !== undefined) return [{ collection: name, id, type: "delete", baseVersion: acknowledged[id] }];
    return assumed && !assumed._deleted ? [{ collection: name, id, type: "delete", baseVersion }] : [];
  }
  const creating = !assumed || assumed._deleted === true;
  const data: RecordData = {};
  for (const field of new Set([...Object.keys(next), ...(creating ? [] : Object.keys(assumed!))])) {
    if (RXDB_FIELDS.has(field) || field === primary || field === versionField) continue;
    const value = next[field] ?? null;
    if (creating ? next[field] !== undefined : !jsonEqual(assumed![field] ?? null, value)) data[field] = value;
  }
  return [{ collection: name, id, type: "upsert", data: writable.pick(name, data, creating), baseVersion }];
}

// Sending ops with the guarantees docs/sync.md asks of every client, for
// adapters whose database has no outbox of its own:
// - the ops are stored (KeyValueStore) BEFORE they leave, and a retry, even
//   after a restart, sends the same op_ids: the server answers `duplicate`
//   instead of applying an old edit over a newer one;
// - every op gets its own answer: `conflict` is rebased (the fields that did
//   not clash are sent again on top of the server's record), `rejected` is
//   surfaced and the record goes back to the server's state (or leaves the
//   device when the server shows none); the record's later ops are still
//   sent, each judged by the server against its own base, as in one batch.
//   An op refused even alone before the server judged it (a 413, a 400
//   naming it) comes with no record: the server's is read (one request,
//   GET /v1/sync/records/{collection}/{id}), so an edit
//   of a record the server keeps does not remove it from the device; a
//   create the server never stored has none to look up;
// - batches respect the op count and body size limits, and a list's delete
//   ends a batch that puts a record in a list (client/batching.ts); a rebased
//   op takes its original's place, ahead of the ops after it (client/outbox.ts);
//   retries the backoff and Retry-After;
// - a push cut short after some of its batches were answered (the network
//   drops, a 5xx) keeps those answers: the library still hands their changes
//   over (it records a push only once the whole push is answered), and the
//   answered ops stand for them (pushedOps: nothing is planned again, so no
//   conflict or rejection is told twice), and the push that completes it
//   returns their corrections with its own. Every answered batch is kept so
//   until the push's corrections are stored (keepCorrections).
// What the local database must show afterwards comes back as `corrections`.
import type { SyncOp, SyncOpError, SyncOpResult, SyncRecord } from "../../../functions/_shared/schemas/sync.ts";
import type { TidesyncApi } from "../../api-client.ts";
import { TidesyncResponseError } from "../../api-error.ts";
import { BatchSize } from "../../batch-refusal.ts";
import { type BatchBounds, fittingCount } from "../../batching.ts";
import { rejectedEvent, type SyncEvent } from "../../events.ts";
import { callListener } from "../../listeners.ts";
import { type ConflictHandler, discardedFields, rebasedOp, serverWinsPerField } from "../../rebase.ts";
import type { KeyValueStore } from "./key-value.ts";
import { serverRecord } from "./pull-page.ts";
import { type RetryOptions, withRetry } from "../../retry.ts";

/**
 * Where one way of pushing from a store keeps what it sent: each way has keys of its own, so one's
 * completed push neither drops another's answers still to complete nor sends its ops out of their
 * order, and an op one answered is never judged unanswered by another.
 */
export interface PushKeys {
  /**
   * The ops sent and not yet answered, in order, and those of the push under way (or cut short) that
   * its answered batches hold: those stay until the push completes, so a long queue is not rewritten
   * after every batch.
   */
  sent: string;
  /**
   * The ops answered so far by a push cut short, until a push completes (their changes are still
   * handed over), one key per answered batch (`<key>.<n>`, n from 0, up to the first missing or
   * empty one): a batch writes only what it adds, so a long queue costs storage writes in proportion
   * to its ops, not to their square. Under `<key>.corrections.<n>`, the corrections batch n made or
   * changed (told already: the push that completes it returns them; a later batch's win).
   */
  answered: string;
}

/** The keys of a library's own pushes. */
export const PUSH_KEYS: PushKeys = { sent: "tidesync.sent_ops", answered: "tidesync.answered_ops" };

/** The answered batches a push cut short kept, in order, each with its corrections. */
async function answeredBatches(store: KeyValueStore, answeredKey: string): Promise<{ ops: SyncOp[]; corrections: Correction[] }[]> {
  const batches: { ops: SyncOp[]; corrections: Correction[] }[] = [];
  for (;;) {
    const n = batches.length;
    const ops = (await store.get<SyncOp[]>(`${answeredKey}.${n}`)) ?? [];
    if (ops.length === 0) return batches;
    batches.push({ ops, corrections: (await store.get<Correction[]>(`${answeredKey}.corrections.${n}`)) ?? [] });
  }
}

export interface PushContext {
  api: TidesyncApi;
  installationId: string;
  store: KeyValueStore;
  retry: RetryOptions;
  newId: () => string;
  emit: (event: SyncEvent) => void;
  /** Batch limits: what GET /v1/meta published, or lower, with its collections' scope fields. */
  bounds: BatchBounds;
  /** How a conflict is rebased (default serverWinsPerField: the clashing fields take the server's values). */
  onConflict?: ConflictHandler;
  /**
   * A batch's applied upserts (creates, edits, rebased ops) with their answers' records, told before
   * their ops leave the stored outbox (a crash in between re-sends them: `duplicate`, told again).
   */
  onApplied?: (applied: AppliedUpsert[]) => Promise<void>;
  /**
   * Records (`collection/id`) the adapter creates that no push of it ever got an answer for (no
   * server version, none acknowledged): the server cannot hold them, so an op of theirs refused
   * unjudged needs no look-up. Not for a record whose op was sent before this push (its attempt
   * may have been stored) or was acknowledged during it: pushOps looks those up anyway.
   */
  neverStored?: ReadonlySet<string>;
  /** Changes per page of such a look-up from a server without GET /v1/sync/records: the adapter's pull limit (at most max_pull_limit). */
  pullLimit?: number;
  /** Where this way of pushing from the store keeps what it sent (default PUSH_KEYS). */
  keys?: PushKeys;
  /**
   * Stores the push's corrections once every op is answered, before the answered ops that stand for
   * the pushed changes are dropped: an app killed in between finds them still answered (nothing sent or
   * told again) and gets the corrections again from the push that completes it.
   */
  keepCorrections?: (corrections: Correction[]) => Promise<void>;
}

/**
 * An upsert of this device the server applied, and the record its answer holds: the one it wrote (a
 * duplicate's: the record now, which may hold other devices' later changes, or be a tombstone).
 */
export interface AppliedUpsert {
  collection: string;
  id: string;
  record: SyncRecord;
}

/** What the local database must hold for a record after the push: the server's record, or nothing (null). */
export interface Correction {
  collection: string;
  id: string;
  record: SyncRecord | null;
}

export interface PushResult {
  applied: number;
  duplicates: number;
  conflicts: number;
  rejected: number;
  /** Records whose local state the push's answers overrule (rejected ops, lost conflicts), those of an earlier attempt cut short included. */
  corrections: Correction[];
}

/** The stored outbox: the ops sent and not yet answered, and those a push under way or cut short had answered (its answered batches hold them). */
async function storedOutbox(store: KeyValueStore, keys: PushKeys): Promise<SyncOp[]> {
  return (await store.get<SyncOp[]>(keys.sent)) ?? [];
}

/** The ops sent and not yet answered, oldest first. */
export async function unansweredOps(store: KeyValueStore, keys = PUSH_KEYS): Promise<SyncOp[]> {
  const answered = (await answeredBatches(store, keys.answered)).flatMap((batch) => batch.ops);
  return withoutAnswered(await storedOutbox(store, keys), answered);
}

/**
 * The ops of the push under way, to plan the library's changes against (planOps): those a push cut
 * short had answered (the library hands their changes over again: told already, not to be sent
 * again), then the unanswered ones.
 */
export async function pushedOps(store: KeyValueStore, keys = PUSH_KEYS): Promise<SyncOp[]> {
  const answered = (await answeredBatches(store, keys.answered)).flatMap((batch) => batch.ops);
  return [...answered, ...withoutAnswered(await storedOutbox(store, keys), answered)];
}

/** Whether a push cut short (or killed before it dropped them) left answered ops under `keys`. */
export async function hasAnsweredOps(store: KeyValueStore, keys = PUSH_KEYS): Promise<boolean> {
  return ((await store.get<SyncOp[]>(`${keys.answered}.0`)) ?? []).length > 0;
}

/**
 * The outbox's ops without those of the answered batches: a batch's answers are stored and its ops
 * stay in the stored outbox until the push completes (or a conflict's rebased op must be stored), so
 * they are in both (not to be sent, nor told, again).
 */
function withoutAnswered(outbox: readonly SyncOp[], answered: readonly SyncOp[]): SyncOp[] {
  const ids = new Set(answered.map((op) => op.op_id));
  return outbox.filter((op) => !ids.has(op.op_id));
}

/**
 * Sends the unanswered ops, then `newOps`, until every op has its answer.
 * Throws (keeping the unanswered ops stored) when the server stays
 * unreachable or refuses the request as a whole.
 */
export async function pushOps(context: PushContext, newOps: readonly SyncOp[]): Promise<PushResult> {
  const { api, installationId, store } = context;
  // The app's listener runs between answers and their storing: what it throws must not cut the push short.
  const emit = (event: SyncEvent) => callListener(context.emit, event);
  // A push cut short: what its answered batches told goes on from there.
  const keys = context.keys ?? PUSH_KEYS;
  const answeredKey = keys.answered;
  const keptBatches = await answeredBatches(store, answeredKey);
  /** How many answered batches are stored: the next one goes under this number. */
  let keptCount = keptBatches.length;
  const answered = keptBatches.flatMap((batch) => batch.ops);
  const sentKey = keys.sent;
  const stored = await storedOutbox(store, keys);
  const unanswered = withoutAnswered(stored, answered);
  let queue = [...unanswered, ...newOps];
  if (newOps.length > 0 || unanswered.length < stored.length) await store.set(sentKey, queue);
  const result: PushResult = { applied: 0, duplicates: 0, conflicts: 0, rejected: 0, corrections: [] };
  const corrections = new Map<string, Correction>();
  for (const correction of keptBatches.flatMap((batch) => batch.corrections)) corrections.set(`${correction.collection}/${correction.id}`, correction);
  /** The server's record as this push's answers last showed it (null: none the user can see). */
  const shown = new Map<string, SyncRecord | null>();
  /** Records the server may hold though the adapter knows no version of them: sent before, or applied now. */
  const maybeStored = new Set([...answered, ...unanswered].map((op) => `${op.collection}/${op.record_id}`));
  const size = new BatchSize(context.bounds.maxOps);

  while (queue.length > 0) {
    const batch = queue.slice(0, fittingCount(queue, { ...context.bounds, maxOps: size.limit }, installationId));
    let results: SyncOpResult[];
    try {
      results = (await withRetry(() => api.syncBatch({ device_id: installationId, ops: batch }), context.retry)).results;
      size.answered();
    } catch (error) {
      // A refused batch applied nothing: smaller batches, and an op refused even alone (too large, or named
      // by a 400) is rejected; a refusal no op is at fault for (an unregistered device) keeps them all.
      const next = size.refused(error, batch.length);
      if (!next) throw error;
      if (next.type === "retry") continue;
      // Refused unjudged: the answer the server would give carries its record, so find it (looked
      // up before anything is told or stored: a failed look-up sends the op again, refused again).
      const [op] = batch;
      const key = `${op.collection}/${op.record_id}`;
      const neverStored = context.neverStored?.has(key) === true && !maybeStored.has(key);
      const record = shown.has(key) ? shown.get(key)! : neverStored ? null : await serverRecord(api, op.collection, op.record_id, context.pullLimit, context.retry);
      results = [{ op_id: op.op_id, status: "rejected", error: next.error, ...(record ? { record } : {}) }];
    }
    if (results.length !== batch.length || results.some((r, i) => r.op_id !== batch[i].op_id)) {
      throw new TidesyncResponseError({ message: "the batch results do not match the ops sent", status: 200 });
    }
    const answeredIds = new Set(batch.map((op) => op.op_id));
    /** The records whose corrections this batch made or changed (what its stored part adds). */
    const corrected = new Set<string>();
    const correct = (key: string, correction: Correction) => {
      corrections.set(key, correction);
      corrected.add(key);
    };
    const rebased: SyncOp[] = [];
    const appliedUpserts: AppliedUpsert[] = [];
    for (const [i, answer] of results.entries()) {
      const op = batch[i];
      const key = `${op.collection}/${op.record_id}`;
      if (answer.status === "duplicate") result.duplicates++;
      const outcome = answer.status === "duplicate" ? (answer.original_status ?? "applied") : answer.status;
      if (answer.record || outcome !== "applied") shown.set(key, answer.record ?? null);
      if (answer.status === "duplicate") {
        // An earlier attempt was processed; the record may have moved on since (another device): show what it is now.
        correct(key, { collection: op.collection, id: op.record_id, record: answer.record ?? null });
      }
      if (outcome === "applied") {
        result.applied++;
        maybeStored.add(key);
        if (op.type === "upsert" && answer.record) appliedUpserts.push({ collection: op.collection, id: op.record_id, record: answer.record });
        // A rebased op landed: the record's state is now the answer's.
        const earlier = corrections.get(key);
        if (earlier && answer.record) correct(key, { ...earlier, record: answer.record });
        continue;
      }
      if (outcome === "conflict") {
        result.conflicts++;
        const server = answer.record;
        correct(key, { collection: op.collection, id: op.record_id, record: server ?? null });
        if (!server) continue;
        const resolution = await (context.onConflict ?? serverWinsPerField)({
          op,
          server,
          baseData: null,
          ...(answer.conflicting_fields ? { conflictingFields: answer.conflicting_fields } : {}),
        });
        // The record's ops behind this one (this batch's and later ones) are newer intent.
        const later = queue.slice(i + 1).filter((next) => next.collection === op.collection && next.record_id === op.record_id);
        const next = rebasedOp(op, server, resolution, later, context.newId);
        if (next) rebased.push(next);
        emit({ type: "conflict", op, server, resolution, rebasedOpId: next?.op_id ?? null });
        const fields = discardedFields(op, server, resolution);
        if (fields === null || fields.length > 0) emit({ type: "write_discarded", reason: "conflict", collection: op.collection, record_id: op.record_id, op, fields, server });
        continue;
      }
      result.rejected++;
      const error: SyncOpError = answer.error ?? { code: "VALIDATION_FAILED", message: "the server rejected this op" };
      correct(key, { collection: op.collection, id: op.record_id, record: answer.record ?? null });
      emit(rejectedEvent(op, error, answer.record));
      emit({ type: "write_discarded", reason: "rejected", collection: op.collection, record_id: op.record_id, op, fields: null, error });
    }
    // Later ops of a record whose op was refused stay: a field they set that nobody else changed is
    // applied, one that clashes is answered conflict in turn (and reported), as within one batch.
    // The batch was the queue's head: its rebased ops take its place, ahead of the ops after it.
    queue = [...rebased, ...queue.filter((op) => !answeredIds.has(op.op_id))];
    if (appliedUpserts.length > 0) await context.onApplied?.(appliedUpserts);
    // Kept before the ops leave the outbox while batches remain (a failure may cut the push short there), and
    // the last batch's too when the adapter stores corrections (keepCorrections): without it, a push of one
    // batch writes nothing more.
    // Only this batch's part: its ops, and the corrections it made or changed; its ops' key last (it makes
    // the part count), after an empty next one: a part a cleared push left behind is never read on.
    if (queue.length > 0 || context.keepCorrections) {
      await store.set(`${answeredKey}.${keptCount + 1}`, []);
      await store.set(`${answeredKey}.corrections.${keptCount}`, [...corrected].map((key) => corrections.get(key)!));
      await store.set(`${answeredKey}.${keptCount}`, batch);
      keptCount++;
    }
    // While batches remain, the stored outbox keeps the answered ops (their answered part above says
    // they are answered): a long queue is written once, not again after every batch (~N²/2B ops). It
    // is written to add a conflict's rebased ops (a restart sends them with the same op_ids) and,
    // emptied, once every op is answered.
    if (queue.length === 0 || rebased.length > 0) await store.set(sentKey, queue);
  }
  result.corrections = [...corrections.values()];
  await context.keepCorrections?.(result.corrections);
  // Every op is answered: the library records the push, its changes are no longer handed over.
  // The first part emptied drops them all at once (reading stops there); the rest only frees the space.
  for (let n = 0; n < keptCount; n++) {
    await store.set(`${answeredKey}.${n}`, []);
    await store.set(`${answeredKey}.corrections.${n}`, []);
  }
  return result;
}

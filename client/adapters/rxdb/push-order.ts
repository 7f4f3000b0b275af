// The order of the RxDB replications' pushes (client/adapters/core/op-order.ts:
// upserts parents first, then deletes children first). RxDB runs one
// replication per collection, each pushing its own rows whenever it likes,
// so the order is kept by making them wait for one another:
// - a collection's push waits until the collections before it are in sync
//   (their upserts are on the server): a task created in a new list goes up
//   after the list;
// - its deletes are held back (stored, and acknowledged to RxDB) until every
//   collection is in sync, then every collection's go in ONE push, children
//   first (orderOps), as the core client's outbox sends them: a task moved
//   out of a list reaches the server before the list's delete, an editor's
//   edits before their leaving the list, and an owner's delete of their own
//   membership shares its batch with the list's delete (a batch of its own
//   would break list_members_keep_an_owner).
// Its timers end with what they wait for: the join grace once every
// collection joined (or none is left), a failed send's wait to try again once
// a replication is cancelled (the new ones send the deletes).
import { abortableSleep } from "../../abortable.ts";
import type { SyncEvent } from "../../events.ts";
import { serverWinsPerField } from "../../rebase.ts";
import type { KeyValueStore } from "../core/key-value.ts";
import { orderOps, sendPhase } from "../core/op-order.ts";
import { type Correction, hasAnsweredOps, type PushContext, pushedOps, type PushKeys, pushOps } from "../core/push-ops.ts";
import type { SyncOp } from "../../../functions/_shared/schemas/sync.ts";

/** A collection's deletes (and later writes of their records) held back, in its store, until every collection's upserts are on the server. */
export const HELD_DELETES_KEY = "tidesync.held_deletes";
/**
 * What a send of them cut short had answered, and had not (apart from a push handler's: either completes
 * on its own): the unanswered ones are sent again by the next send of them, never by a collection's own
 * push (out of their order).
 */
const HELD_KEYS: PushKeys = { sent: "tidesync.held_deletes.sent_ops", answered: "tidesync.held_deletes.answered" };

/** Whether the store holds deletes held back, or answers of a send of them it did not complete (killed before it dropped them): a send is due. */
export async function heldDeletesToSend(store: KeyValueStore): Promise<boolean> {
  return ((await store.get<SyncOp[]>(HELD_DELETES_KEY)) ?? []).length > 0 || (await hasAnsweredOps(store, HELD_KEYS));
}

/** How long after a replication joins the others it names may take to join, before the order says one is missing. */
const JOIN_GRACE_MS = 10_000;

/** One collection's replication, as the order sees it. */
export interface OrderedReplication {
  /** Resolves once RxDB has pushed and pulled what it holds and the push's answers are in the collection (held-back deletes aside). */
  idle(): Promise<void>;
  /** Runs `work` while the collection's push handler runs nothing else (its outbox and held-back deletes stay as read). */
  exclusive<T>(work: () => Promise<T>): Promise<T>;
  /** Where the collection keeps its outbox and its held-back deletes. */
  store: KeyValueStore;
  /** What a push of the collection's ops needs (GET /v1/meta once); throws while the server is unreachable. */
  pushContext(): Promise<PushContext>;
  /** Push answers that overrule the collection's documents: a pull hands them to RxDB. */
  keepCorrections(corrections: Correction[]): Promise<void>;
  /** The replication was cancelled (an app restart makes new ones). */
  stopped(): boolean;
  /** A failed send of the held-back deletes, or a collection of the order never replicated, shown on RxDB's error$. */
  reportError(error: unknown): void;
  retryMs: number;
}

/** Shared by the replications of one database: which collection comes before which. */
export class RxdbPushOrder {
  private readonly members = new Map<string, OrderedReplication>();
  private flushing: Promise<void> | null = null;
  private again = false;
  /** Woken when a replication joins. */
  private joined: (() => void)[] = [];
  private readonly joinGraceMs: number;
  private graceTimer: ReturnType<typeof setTimeout> | null = null;
  /** Aborts the wait before a failed send of the held-back deletes is tried again. */
  private retrying: AbortController | null = null;
  /** Set once a collection it names did not join in time (cleared when it does): held-back deletes cannot go. */
  private missing: Error | null = null;
  /** Woken when `missing` is set. */
  private stalled: (() => void)[] = [];

  /**
   * `collections`: every replicated collection, by its server name, parents first (list_members right after lists).
   * `joinGraceMs`: how long a named collection may take to replicate after another did (default 10 s).
   */
  constructor(readonly collections: readonly string[], options: { joinGraceMs?: number } = {}) {
    this.joinGraceMs = options.joinGraceMs ?? JOIN_GRACE_MS;
  }

  /** A replication joins (again, after a restart: the new one replaces the old). */
  join(name: string, replication: OrderedReplication): void {
    if (!this.collections.includes(name)) throw new Error(`RxdbPushOrder: "${name}" is not one of its collections (${this.collections.join(", ")})`);
    this.members.set(name, replication);
    for (const wake of this.joined.splice(0)) wake();
    if (this.notJoined().length === 0) {
      this.missing = null;
      this.stopGrace();
    } else this.graceTimer ??= this.checkJoinedAfterGrace();
  }

  /** A cancelled replication leaves (unless a new one of its collection replaced it). */
  leave(name: string, replication: OrderedReplication): void {
    if (this.members.get(name) !== replication) return;
    this.members.delete(name);
    // A send to try again is the next replications' (flush sees the cancelled one at once).
    this.retrying?.abort();
    if (this.members.size === 0) this.stopGrace();
  }

  /** Resolves once the collections whose upserts go before `name`'s are in sync. */
  async beforeUpserts(name: string): Promise<void> {
    const phase = sendPhase("upsert", name, this.collections);
    await Promise.all(this.collections.filter((other) => sendPhase("upsert", other, this.collections) < phase).map((other) => this.members.get(other)?.idle()));
  }

  /** Sends the held-back deletes once every collection is in sync (a send already under way goes again after). */
  sendDeletes(): void {
    this.again = true;
    this.flushing ??= this.flush().finally(() => {
      this.flushing = null;
      if (this.again) this.sendDeletes();
    });
  }

  /** Resolves once no held-back delete waits to be sent (none was, or they went); rejects while a collection it names is not replicated. */
  async awaitDeletes(): Promise<void> {
    while (this.flushing) {
      if (this.missing) throw this.missing;
      let wake!: () => void;
      const stalled = new Promise<void>((resolve) => this.stalled.push(wake = resolve));
      try {
        await Promise.race([this.flushing, stalled]);
      } finally {
        // Returned because the send ended: its waiter would stay for the app's lifetime.
        this.stalled = this.stalled.filter((waiter) => waiter !== wake);
      }
    }
  }

  private stopGrace(): void {
    if (this.graceTimer !== null) clearTimeout(this.graceTimer);
    this.graceTimer = null;
  }

  /** The named collections without a running replication. */
  private notJoined(): string[] {
    return this.collections.filter((name) => !this.members.get(name) || this.members.get(name)!.stopped());
  }

  /**
   * An order naming a collection the app does not replicate would hold every delete back for ever
   * (and awaitInSync would never resolve): said on error$ instead, once the others had time to join.
   */
  private checkJoinedAfterGrace(): ReturnType<typeof setTimeout> {
    const timer = setTimeout(() => {
      this.graceTimer = null;
      const absent = this.notJoined();
      if (absent.length === 0 || this.members.size === 0) return;
      this.missing = new Error(
        `RxdbPushOrder: no replication of ${absent.map((name) => `"${name}"`).join(", ")} joined within ${this.joinGraceMs} ms; ` +
          `held-back deletes go only once every collection it names (${this.collections.join(", ")}) replicates with it: ` +
          "pass this order to a replicateTidesync of each, or name only the replicated collections",
      );
      for (const member of this.members.values()) member.reportError(this.missing);
      for (const wake of this.stalled.splice(0)) wake();
    }, this.joinGraceMs);
    // Never what keeps a process (Node, a test) running.
    (timer as { unref?: () => void }).unref?.();
    return timer;
  }

  private async flush(): Promise<void> {
    while (this.again) {
      this.again = false;
      // Every collection has joined (after a restart, one may still be starting) and pushed its upserts.
      while (this.notJoined().length > 0) {
        await new Promise<void>((resolve) => this.joined.push(resolve));
      }
      const members = this.collections.map((name) => this.members.get(name)!);
      await Promise.all(members.map((member) => member.idle()));
      for (;;) {
        // Cancelled (meanwhile): the new replications send them (they are stored).
        if (members.some((member, i) => member.stopped() || this.members.get(this.collections[i]) !== member)) {
          this.again = true;
          break;
        }
        try {
          await this.sendHeld(members);
          break;
        } catch (error) {
          // Refused by one cancelled meanwhile (its outbox takes no more work): the check above ends it.
          if (members.some((member) => member.stopped())) continue;
          for (const member of members) member.reportError(error);
          const retrying = (this.retrying = new AbortController());
          // Cut short by a replication leaving (TidesyncAbortedError): the check above ends the loop.
          await abortableSleep(members[0].retryMs, retrying.signal).catch(() => {});
          if (this.retrying === retrying) this.retrying = null;
        }
      }
    }
  }

  /** Every collection's held-back deletes in one push, children first; each collection's cleared once all are answered. */
  private async sendHeld(members: readonly OrderedReplication[]): Promise<void> {
    // Every collection's push handler waits meanwhile (always taken in this order: none waits for another's while holding its own).
    const allHeld = members.reduceRight<() => Promise<void>>((inner, member) => () => member.exclusive(inner), async () => {
      const outbox = outboxAcross(new Map(members.map((member, i) => [this.collections[i], member.store])), this.collections);
      // (A send killed as it cleared them still has its answers to drop, and maybe corrections to store.)
      if (!(await heldDeletesToSend(outbox))) return;
      const held = await Promise.all(members.map(async (member) => (await member.store.get<SyncOp[]>(HELD_DELETES_KEY)) ?? []));
      const contexts = new Map<string, PushContext>();
      for (const [i, member] of members.entries()) contexts.set(this.collections[i], await member.pushContext());
      const contextOf = (collection: string) => contexts.get(collection) ?? contexts.get(this.collections[0])!;
      // A send cut short left some in the outboxes: they go again first, with their op_ids; those it had answered, not again.
      const sent = new Set((await pushedOps(outbox, HELD_KEYS)).map((op) => op.op_id));
      await pushOps({
        ...contextOf(this.collections[0]),
        store: outbox,
        keys: HELD_KEYS,
        emit: (event) => contextOf(eventCollection(event)).emit(event),
        onConflict: (conflict) => (contextOf(conflict.op.collection).onConflict ?? serverWinsPerField)(conflict),
        // Stored, and the held deletes cleared, before their answers are dropped: a kill in between sends nothing again.
        keepCorrections: async (corrections) => {
          for (const [i, member] of members.entries()) await member.keepCorrections(corrections.filter((correction) => correction.collection === this.collections[i]));
          for (const member of members) await member.store.set(HELD_DELETES_KEY, []);
        },
      }, orderOps(held.flat().filter((op) => !sent.has(op.op_id)), this.collections));
    });
    await allHeld();
  }
}

/** The collection an event of a push is about. */
function eventCollection(event: SyncEvent): string {
  return event.type === "write_discarded" ? event.collection : "op" in event ? event.op.collection : "";
}

/**
 * The outboxes of several collections as the one pushOps keeps: each op stays in its collection's
 * store (a restart finds it there); read together in the order they are sent (orderOps, which
 * orders the collections' parts of an ordered list as it was). The corrections pushOps keeps for a
 * push cut short are split and joined the same way (by collection; each's order kept).
 */
function outboxAcross(stores: ReadonlyMap<string, KeyValueStore>, collections: readonly string[]): KeyValueStore {
  return {
    async get<T>(key: string) {
      const parts = await Promise.all([...stores.values()].map(async (store) => (await store.get<SyncOp[]>(key)) ?? []));
      return orderOps(parts.flat(), collections) as T;
    },
    async set(key, value) {
      const ops = value as SyncOp[];
      for (const [collection, store] of stores) await store.set(key, ops.filter((op) => op.collection === collection));
    },
  };
}

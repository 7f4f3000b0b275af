// The order of the RxDB replications' pushes (client/adapters/core/op-order.ts:
// upserts parents first, then deletes children first). RxDB runs one
// replication per collection, each pushing its own rows whenever it likes,
// so the order is kept by making them wait for one another:
// - a collection's push waits until the collections before it are in sync
//   (their upserts are on the server): a task created in a new list goes up
//   after the list;
// - its deletes are held back (stored, and acknowledged to RxDB) until every
//   collection is in sync, then sent collection by collection, children
//   first: a task moved out of a list reaches the server before the list's
//   delete, an editor's edits before their leaving the list.
import { sendPhase } from "../core/op-order.ts";

/** One collection's replication, as the order sees it. */
export interface OrderedReplication {
  /** Resolves once RxDB has pushed and pulled what it holds and the push's answers are in the collection (held-back deletes aside). */
  idle(): Promise<void>;
  /** Sends the held-back deletes; throws when the server stays unreachable (they stay held back). */
  sendDeletes(): Promise<void>;
  /** The replication was cancelled (an app restart makes new ones). */
  stopped(): boolean;
  /** A failed send of the held-back deletes, shown on RxDB's error$. */
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

  /** `collections`: every replicated collection, by its server name, parents first (list_members right after lists). */
  constructor(readonly collections: readonly string[]) {}

  /** A replication joins (again, after a restart: the new one replaces the old). */
  join(name: string, replication: OrderedReplication): void {
    if (!this.collections.includes(name)) throw new Error(`RxdbPushOrder: "${name}" is not one of its collections (${this.collections.join(", ")})`);
    this.members.set(name, replication);
    for (const wake of this.joined.splice(0)) wake();
  }

  /** A cancelled replication leaves (unless a new one of its collection replaced it). */
  leave(name: string, replication: OrderedReplication): void {
    if (this.members.get(name) === replication) this.members.delete(name);
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

  /** Resolves once no held-back delete waits to be sent (none was, or they went). */
  async awaitDeletes(): Promise<void> {
    while (this.flushing) await this.flushing;
  }

  private async flush(): Promise<void> {
    while (this.again) {
      this.again = false;
      // Every collection has joined (after a restart, one may still be starting) and pushed its upserts.
      while (this.collections.some((name) => !this.members.get(name) || this.members.get(name)!.stopped())) {
        await new Promise<void>((resolve) => this.joined.push(resolve));
      }
      const members = this.collections.map((name) => this.members.get(name)!);
      await Promise.all(members.map((member) => member.idle()));
      if (members.some((member) => member.stopped())) {
        // Cancelled meanwhile: wait for the new replications.
        this.again = true;
        continue;
      }
      const childrenFirst = [...this.collections].sort((a, b) => sendPhase("delete", a, this.collections) - sendPhase("delete", b, this.collections));
      for (const name of childrenFirst) {
        for (;;) {
          const member = this.members.get(name);
          // Cancelled: the new replications send them (they are stored).
          if (!member || member.stopped()) {
            this.again = true;
            return;
          }
          try {
            await member.sendDeletes();
            break;
          } catch (error) {
            member.reportError(error);
            await new Promise((resolve) => setTimeout(resolve, member.retryMs));
          }
        }
      }
    }
  }
}

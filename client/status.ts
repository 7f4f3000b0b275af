// What an app renders about sync: a state, how many local writes are not yet
// on the server, when the last sync completed and why the last one failed.
// Listeners are called synchronously on every change with the new snapshot
// (one that throws is reported and skipped: client/listeners.ts).
import type { ClientErrorCode } from "./api-error.ts";
import { callListeners } from "./listeners.ts";

export type SyncState =
  /**
   * Nothing running, and the last contact with the server worked; also the state a client opens
   * in, before any contact (then lastSyncedAt is null: nothing has failed, nothing was tried).
   */
  | "online"
  /** The server could not be reached (no network, timeouts); local writes keep queueing. */
  | "offline"
  /** A sync is running. */
  | "syncing"
  /** The last sync failed for a reason retrying will not fix by itself (see lastErrorCode). */
  | "error";

export interface SyncStatus {
  state: SyncState;
  /** Ops in the outbox (sent but unacknowledged ones included). */
  pending: number;
  /** ISO time of the last sync that completed (push and pull), or null. */
  lastSyncedAt: string | null;
  /** Code of the last failure (an API error code, or NETWORK / TIMEOUT / BAD_RESPONSE), null after a success. */
  lastErrorCode: ClientErrorCode | null;
}

export type StatusListener = (status: SyncStatus) => void;

export class StatusStore {
  private status: SyncStatus;
  private readonly listeners = new Set<StatusListener>();

  constructor(initial: SyncStatus) {
    this.status = initial;
  }

  get(): SyncStatus {
    return this.status;
  }

  update(change: Partial<SyncStatus>): void {
    const next = { ...this.status, ...change };
    if ((Object.keys(next) as (keyof SyncStatus)[]).every((key) => next[key] === this.status[key])) return;
    this.status = next;
    callListeners(this.listeners, next);
  }

  /** Returns the unsubscribe function. */
  subscribe(listener: StatusListener): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }
}

// Events the sync client emits, for the app to show or log. The one an app
// must not ignore is `write_discarded`: a local write (or part of it) that
// will never reach the server, and why.
import type { SyncOp, SyncOpError, SyncRecord } from "../functions/_shared/schemas/sync.ts";
import type { ConflictResolution } from "./rebase.ts";

export interface WriteDiscardedEvent {
  type: "write_discarded";
  reason: "conflict" | "rejected";
  collection: string;
  record_id: string;
  /** The op as it was sent. */
  op: SyncOp;
  /** The fields whose local values were dropped; null = the whole op (e.g. a delete that did not happen). */
  fields: string[] | null;
  /** conflict: the server's record that won. */
  server?: SyncRecord;
  /** rejected: why. */
  error?: SyncOpError;
}

export interface ConflictEvent {
  type: "conflict";
  op: SyncOp;
  server: SyncRecord;
  resolution: ConflictResolution;
  /** The new op that re-applies kept fields, if any. */
  rebasedOpId: string | null;
}

export interface OpRejectedEvent {
  type: "op_rejected";
  op: SyncOp;
  error: SyncOpError;
}

export interface ResyncEvent {
  type: "resync";
  /** Why the client pulls from scratch. */
  reason: "RESYNC_REQUIRED" | "INVALID_CURSOR";
}

export type SyncEvent = WriteDiscardedEvent | ConflictEvent | OpRejectedEvent | ResyncEvent;
export type SyncEventListener = (event: SyncEvent) => void;

// Events the sync client emits, for the app to show or log. The one an app
// must not ignore is `write_discarded`: a local write (or part of it) that
// will never reach the server, and why. `op_rejected` with error.code
// FORBIDDEN (e.g. a viewer's edit) or NOT_FOUND (a record or list the user
// cannot see, or no longer) is how an app learns about a refused write.
import type { SyncOp, SyncOpError, SyncRecord } from "../functions/_shared/schemas/sync.ts";
import type { ConflictResolution } from "./rebase.ts";

export interface WriteDiscardedEvent {
  type: "write_discarded";
  /**
   * conflict: another device's change won; rejected: the server refused the op;
   * deleted: the record was deleted on the server, or moved where this user
   * cannot see it, before the op was sent (a pull's removal does not say which);
   * access_revoked: the user lost access to the record (e.g. was removed from its list).
   */
  reason: "conflict" | "rejected" | "deleted" | "access_revoked";
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
  /** error.code: VALIDATION_FAILED, PAYLOAD_TOO_LARGE, QUOTA_EXCEEDED, FORBIDDEN or NOT_FOUND. */
  error: SyncOpError;
  /** The server's current record, which the local row shows again (the op no longer applies on top); absent when the server sent none. */
  record?: SyncRecord;
  /** NOT_FOUND without a record: the user cannot see the record, so its local row and its other queued ops were dropped. */
  dropped: boolean;
  /**
   * A create refused, of a record the server holds nothing of, whose data the record's next queued
   * create-style op now carries (that op's op_id): the user wrote the record again since (a task
   * moved from a list they lost to one of theirs), the record stays, and that op is judged as the
   * record's create, with this op's fields under its own. No write_discarded is told: nothing
   * written is lost unless that op is refused too (then told as any refused op).
   */
  foldedInto?: string;
}

/**
 * The op_rejected event of a refused op, as the core client and the adapters tell it: dropped is a
 * NOT_FOUND's without a record (the record left the user's sight) and not carried on by a later op
 * (`foldedInto`); an op refused unjudged is not one, even when its record leaves the device (a
 * create never stored).
 */
export function rejectedEvent(op: SyncOp, error: SyncOpError, record: SyncRecord | undefined, foldedInto?: string): OpRejectedEvent {
  return {
    type: "op_rejected",
    op,
    error,
    ...(record ? { record } : {}),
    dropped: !record && foldedInto === undefined && error.code === "NOT_FOUND",
    ...(foldedInto === undefined ? {} : { foldedInto }),
  };
}

export interface ResyncEvent {
  type: "resync";
  /** Why the client pulls from scratch. */
  reason: "RESYNC_REQUIRED" | "INVALID_CURSOR";
}

/**
 * Some of the client's `collections` are not synced by the server (its GET /v1/meta does not list
 * them: dropped, or not deployed yet): the pull leaves them out, since the server refuses a filter
 * naming them (400 VALIDATION_FAILED) on every pull. Told each time the client fetches GET /v1/meta.
 */
export interface CollectionsUnavailableEvent {
  type: "collections_unavailable";
  /** The `collections` the server does not sync. */
  collections: string[];
  /** Those pulled instead; empty: none of them is synced, and nothing is pulled. */
  pulling: string[];
}

export type SyncEvent = WriteDiscardedEvent | ConflictEvent | OpRejectedEvent | ResyncEvent | CollectionsUnavailableEvent;
export type SyncEventListener = (event: SyncEvent) => void;

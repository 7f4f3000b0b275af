// What the app sees of a record: the server's state with the device's pending
// ops applied on top, by the same rules the server merges with (a patch sets
// the fields it carries; a patch on a deleted or unknown record creates it
// from the patch; a delete leaves a tombstone).
import type { SyncOp, SyncRecord } from "../functions/_shared/schemas/sync.ts";
import type { RecordData } from "./storage.ts";

export interface LocalRecord {
  collection: string;
  id: string;
  /** The server version this view builds on; null when the record only exists on this device so far. */
  version: number | null;
  deleted: boolean;
  data: RecordData | null;
  /** True while local writes of this record are not yet acknowledged by the server. */
  pending: boolean;
}

export function localView(collection: string, id: string, server: SyncRecord | undefined, pending: readonly SyncOp[]): LocalRecord | undefined {
  if (!server && pending.length === 0) return undefined;
  let deleted = server ? server.deleted : true;
  let data: RecordData | null = server?.data ?? null;
  for (const op of pending) {
    if (op.type === "delete") {
      deleted = true;
      data = null;
    } else {
      data = { ...(deleted ? {} : data ?? {}), ...(op.data ?? {}) };
      deleted = false;
    }
  }
  return { collection, id, version: server?.version ?? null, deleted, data, pending: pending.length > 0 };
}

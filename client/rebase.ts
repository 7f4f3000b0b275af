// What happens to a local write the server answered `conflict` for (another
// device changed a field this op sets since its base_version, or deleted the
// record). The app decides through an `onConflict` callback; the default rule
// is "server wins per field":
//   upsert vs a live record  → the fields another device changed keep the
//                              server's values; the op's other fields are
//                              re-applied on top, as a new op based on the
//                              server's current version, queued in the
//                              refused op's place (client/outbox.ts)
//   upsert vs a deleted one  → the delete wins; the local edit is discarded
//   delete vs a changed one  → the other device's change wins; the record stays
// Whatever the rule, the client tells the app (event `write_discarded`) about
// every local value that did not make it to the server.
import type { SyncOp, SyncRecord } from "../functions/_shared/schemas/sync.ts";
import type { RecordData } from "./storage.ts";

export interface ConflictInfo {
  /** The local op the server refused (nothing of it was applied). */
  op: SyncOp;
  /** The server's current record. */
  server: SyncRecord;
  /** The server's data the op was based on (null: the record did not exist or was deleted). */
  baseData: RecordData | null;
  /**
   * The fields the server says clashed (`conflicting_fields`: another device changed them
   * since the op's base; "*": the record was deleted). Absent from servers before it.
   */
  conflictingFields?: string[];
}

export type ConflictResolution =
  /** Send these fields again, based on the server's current version. */
  | { type: "upsert"; data: RecordData }
  /** Delete the record anyway. */
  | { type: "delete" }
  /** Keep the server's record as it is. */
  | { type: "discard" };

export type ConflictHandler = (conflict: ConflictInfo) => ConflictResolution | Promise<ConflictResolution>;

/** Structural equality of JSON values (key order ignored). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((value, i) => jsonEqual(value, b[i]));
  const aKeys = Object.keys(a);
  const bRecord = b as Record<string, unknown>;
  if (aKeys.length !== Object.keys(bRecord).length) return false;
  return aKeys.every((key) => Object.hasOwn(bRecord, key) && jsonEqual((a as Record<string, unknown>)[key], bRecord[key]));
}

/** The fields of `fields` whose server value differs from the value the op was based on. */
export function changedOnServer(fields: readonly string[], baseData: RecordData | null, server: SyncRecord): string[] {
  return fields.filter((field) => !jsonEqual(baseData?.[field], server.data?.[field]));
}

/** The default rule: server wins for the fields it changed; the rest of the local edit is kept. */
export const serverWinsPerField: ConflictHandler = ({ op, server, baseData, conflictingFields }) => {
  if (server.deleted || op.type === "delete") return { type: "discard" };
  const patch = op.data ?? {};
  // The server names the clashing fields; an older server does not, so compare with the base.
  const changed = new Set(conflictingFields ?? changedOnServer(Object.keys(patch), baseData, server));
  const kept = Object.fromEntries(Object.entries(patch).filter(([field]) => !changed.has(field)));
  return Object.keys(kept).length > 0 ? { type: "upsert", data: kept } : { type: "discard" };
};

/**
 * What the app loses with `resolution`: the op's fields whose value is not
 * re-sent and differs from the server's (null = the whole op, i.e. a delete
 * that did not happen). Empty when nothing was lost.
 */
export function discardedFields(op: SyncOp, server: SyncRecord, resolution: ConflictResolution): string[] | null {
  if (op.type === "delete") return resolution.type === "delete" || server.deleted ? [] : null;
  const resent = resolution.type === "upsert" ? resolution.data : {};
  return Object.entries(op.data ?? {})
    .filter(([field, value]) => !Object.hasOwn(resent, field) && (server.deleted || resolution.type === "delete" || !jsonEqual(value, server.data?.[field])))
    .map(([field]) => field);
}

/**
 * The op that sends again what `resolution` keeps of the refused `op`, based on the server's
 * current version, or null. `later` are the record's ops queued behind `op`: newer intent, each
 * sent with its own base and answered on its own, so a later delete supersedes the rebased op
 * and the fields a later op sets are left to it (re-sent after it, they would undo it).
 */
export function rebasedOp(op: SyncOp, server: SyncRecord, resolution: ConflictResolution, later: readonly SyncOp[], newId: () => string): SyncOp | null {
  if (resolution.type === "discard" || later.some((next) => next.type === "delete")) return null;
  const base = () => ({ op_id: newId(), collection: op.collection, record_id: op.record_id, base_version: server.version });
  if (resolution.type === "delete") return { ...base(), type: "delete" };
  const overridden = new Set(later.flatMap((next) => Object.keys(next.data ?? {})));
  const data = Object.fromEntries(Object.entries(resolution.data).filter(([field]) => !overridden.has(field)));
  return Object.keys(data).length > 0 ? { ...base(), type: "upsert", data } : null;
}

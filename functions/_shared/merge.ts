// Field-level merge of one sync op into the server's current record, on
// server-issued versions only (no client clocks). Pure: no database, no time;
// the caller passes the sequence number and timestamp the write would get.
//
// Every record keeps, per field, the change_seq of the field's last write and
// the device that wrote it (field_versions): the id of its device row, one per
// user and installation, so two accounts on one phone are two devices here. The key "*" stands for "every
// field not listed": the database's insert stamps it (one entry, not one per
// column) and a delete resets to it, so a tombstone remembers who deleted it
// and when.
//
// Rules (base = op.base_version, or 0 for a client-created record):
//   a write of field f is FOREIGN-NEWER when f's entry (or "*") has v > base and
//   was written by another device, or by an unknown one (no device_id).
//   upsert on a missing record          → create with the patch.
//   upsert on a live record             → conflict iff a patched field is
//                                          foreign-newer; else the patch merges
//                                          over the current data.
//   upsert on a tombstone               → conflict iff the delete is
//                                          foreign-newer; else re-create from
//                                          the patch.
//   delete on a missing record          → a tombstone is written.
//   delete on a live record             → conflict iff ANY field a client can
//                                          write is foreign-newer (nothing
//                                          another device wrote since base is
//                                          silently lost); a change of a field
//                                          only the server writes (created_by
//                                          set null when its user is purged) is
//                                          bookkeeping and does not count.
//   delete on a tombstone               → applied, nothing written.
//   create twice (base null, record exists) = base 0: fields the other device
//   set conflict, fields nobody set merge.
// A device's own writes never conflict with its later ops, so ops of one
// device chain in order, within a batch and across batches. Writes made
// earlier in the same batch count as the op's own even without a device_id:
// a batch comes from one client.

export type JsonObject = Record<string, unknown>;

export interface FieldVersion {
  /** change_seq of the field's last write. */
  v: number;
  /**
   * The device that wrote it: its app_private.devices row's id (one per user and installation,
   * never the bare installation id); null when unknown (a direct write, a forgotten device).
   */
  d: string | null;
}
export type FieldVersions = Record<string, FieldVersion>;

/** The "every other field" key of field_versions, set by deletes. */
export const ALL_FIELDS = "*";

export interface ServerRecord {
  collection: string;
  id: string;
  version: number;
  deleted: boolean;
  data: JsonObject | null;
  field_versions: FieldVersions;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
}

export interface MergeOp {
  type: "upsert" | "delete";
  base_version: number | null;
  data?: JsonObject;
}

export interface WriteContext {
  collection: string;
  id: string;
  /** The pushing device's row id (app_private.devices.id, as FieldVersion.d); null when none. */
  deviceId: string | null;
  /** The change_seq this write gets if it is applied (> every existing version). */
  seq: number;
  /** Server time of the write. */
  now: string;
  /**
   * Versions above this were written earlier in the same batch, i.e. by this
   * client; they never conflict. The user's last_seq before the batch (a
   * standalone merge passes Infinity: no own writes).
   */
  batchFloor: number;
  /**
   * The collection's fields no client writes (CollectionDefinition.serverFields). No device
   * wrote their changes, so none makes a delete conflict; an upsert never patches them.
   */
  serverFields?: ReadonlySet<string>;
}

export type MergeResult =
  /** `written` is false when the op needed no write (deleting a tombstone). */
  | { outcome: "applied"; next: ServerRecord; written: boolean }
  /** `fields`: the fields another device changed since base ("*" = the record's deletion or any field). */
  | { outcome: "conflict"; current: ServerRecord; fields: string[] };

/** The stamp of a field's last write: its own entry, or the "*" entry that covers it. */
export function fieldVersion(versions: FieldVersions, field: string): FieldVersion | undefined {
  return versions[field] ?? versions[ALL_FIELDS];
}

/** True when `entry` was written after `base` by another (or an unknown) device, not earlier in this batch. */
export function isForeignNewer(entry: FieldVersion | undefined, base: number, ctx: Pick<WriteContext, "deviceId" | "batchFloor">): boolean {
  if (!entry || entry.v <= base || entry.v > ctx.batchFloor) return false;
  return ctx.deviceId === null || entry.d !== ctx.deviceId;
}

/**
 * Every field a client can write of a live record written after `base` by another device, by
 * name: "*" (an insert stamps it for every column) stands for the data's client fields it
 * covers, and for itself only when it covers none (a deletion remembered by a record re-created
 * here). Fields only the server writes are left out: their change is no device's work.
 */
function foreignNewerFields(current: ServerRecord, base: number, ctx: WriteContext): string[] {
  const versions = current.field_versions;
  const clientField = (field: string) => !ctx.serverFields?.has(field);
  const fields = Object.keys(versions).filter((field) => field !== ALL_FIELDS && clientField(field) && isForeignNewer(versions[field], base, ctx));
  if (isForeignNewer(versions[ALL_FIELDS], base, ctx)) {
    const covered = Object.keys(current.data ?? {}).filter((field) => !(field in versions) && clientField(field));
    fields.push(...(covered.length > 0 ? covered : [ALL_FIELDS]));
  }
  return fields.sort();
}

function stamp(fields: string[], ctx: WriteContext): FieldVersions {
  const stamped: FieldVersions = {};
  for (const field of fields) stamped[field] = { v: ctx.seq, d: ctx.deviceId };
  return stamped;
}

export function mergeOp(current: ServerRecord | null, op: MergeOp, ctx: WriteContext): MergeResult {
  const base = op.base_version ?? 0;
  if (current && ctx.seq <= current.version) throw new RangeError("the write's seq must exceed the record's version");

  if (op.type === "delete") {
    if (current?.deleted) return { outcome: "applied", next: current, written: false };
    if (current) {
      const fields = foreignNewerFields(current, base, ctx);
      if (fields.length > 0) return { outcome: "conflict", current, fields };
    }
    return {
      outcome: "applied",
      written: true,
      next: {
        collection: ctx.collection,
        id: ctx.id,
        version: ctx.seq,
        deleted: true,
        data: null,
        field_versions: stamp([ALL_FIELDS], ctx),
        created_at: current?.created_at ?? ctx.now,
        updated_at: ctx.now,
        deleted_at: ctx.now,
      },
    };
  }

  const patch = op.data ?? {};
  const patched = Object.keys(patch);
  let data: JsonObject;
  let versions: FieldVersions;
  if (!current) {
    data = { ...patch };
    versions = stamp(patched, ctx);
  } else if (current.deleted) {
    const deletion = current.field_versions[ALL_FIELDS] ?? { v: current.version, d: null };
    if (isForeignNewer(deletion, base, ctx)) return { outcome: "conflict", current, fields: [ALL_FIELDS] };
    data = { ...patch };
    versions = { [ALL_FIELDS]: deletion, ...stamp(patched, ctx) };
  } else {
    const fields = patched.filter((field) => isForeignNewer(fieldVersion(current.field_versions, field), base, ctx)).sort();
    if (fields.length > 0) return { outcome: "conflict", current, fields };
    data = { ...(current.data ?? {}), ...patch };
    versions = { ...current.field_versions, ...stamp(patched, ctx) };
  }
  return {
    outcome: "applied",
    written: true,
    next: {
      collection: ctx.collection,
      id: ctx.id,
      version: ctx.seq,
      deleted: false,
      data,
      field_versions: versions,
      created_at: current?.created_at ?? ctx.now,
      updated_at: ctx.now,
      deleted_at: null,
    },
  };
}

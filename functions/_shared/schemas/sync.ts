// Wire shapes of the sync API (api-v1.md: POST /v1/sync/batch, GET
// /v1/sync/changes), shared by the function, the client and the tests.
import { z } from "zod";
import { digitsParam } from "./digits.ts";
import { type FieldDetail, fieldDetailSchema } from "../errors.ts";
import { isUuid, uuidSchema } from "../uuid.ts";
import { serverTimeSchema } from "./server-time.ts";

const version = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);
const timestamp = z.string().datetime({ offset: true });

const isJsonObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);
/**
 * An op's data: a JSON object taken as it is, its fields checked later
 * against the collection's columns. Not z.record(), which rebuilds the object
 * key by key (a 500-op push held every data object twice) and drops a
 * "__proto__" key that the collection's schema must see and reject.
 */
const jsonObject = z.custom<Record<string, unknown>>(isJsonObject, { message: "must be an object", params: { code: "invalid_type" } })
  .meta({ type: "object", additionalProperties: {} });

/** A record as the server holds it, as listed by GET /v1/sync/changes and returned by a push. */
export const syncRecordSchema = z.object({
  collection: z.string(),
  id: uuidSchema.describe("lowercase"),
  version: version.describe("server-issued, strictly increasing per record: the sequence number of the record's latest write"),
  deleted: z.boolean(),
  data: z.record(z.string(), z.unknown()).nullable().describe("the row's columns (except id); null when deleted or no longer visible to the caller"),
  updated_at: timestamp,
  reason: z.enum(["access_revoked"]).optional()
    .describe("pull only, on a removal: the caller lost access to the record's scope (e.g. was removed from the list)"),
});
export type SyncRecord = z.infer<typeof syncRecordSchema>;

/**
 * One op of a batch, as a client sends it. The function checks it op by op
 * (planBatch): an op that breaks it (a record_id that is not a uuid, an
 * unknown type, an unexpected key such as a client-sent `version`, …) is
 * rejected on its own, like one whose content is wrong (unknown collection,
 * data against the collection's schema or size, quota).
 */
export const syncOpSchema = z.strictObject({
  op_id: uuidSchema.describe("client-generated; the same op keeps its op_id across retries (exactly-once per user and op_id); compared lowercase"),
  collection: z.string().min(1).max(64),
  record_id: uuidSchema.describe("the row's id (uuid), compared and returned lowercase"),
  type: z.enum(["upsert", "delete"]),
  base_version: version.nullable().describe("the server version the change was based on; null for a record the client created"),
  data: jsonObject.optional().describe("upsert only: a patch; present fields are set, absent ones unchanged"),
}).meta({
  id: "SyncOp",
  // What planBatch answers a delete with data (rejected, VALIDATION_FAILED "a delete carries no
  // data"), published: the op's own check takes it so that the rejection can carry the record.
  if: { properties: { type: { const: "delete" } }, required: ["type"] },
  then: { not: { required: ["data"] } },
});
export type SyncOp = z.infer<typeof syncOpSchema>;

/** An op as the batch's envelope takes it: an object with a uuid op_id, the rest unchecked (planBatch checks it). */
export interface SyncOpEnvelope {
  op_id: string;
  [field: string]: unknown;
}

/**
 * What the edge checks of each op: only what answering it per op needs, an
 * object and a uuid op_id (without one, its result could not be told apart nor
 * the op made exactly-once: the batch's 400). The op is taken as it is, not
 * rebuilt (a "__proto__" key stays for syncOpSchema to refuse). Documented as
 * a SyncOp, what a client must send.
 */
const syncOpEnvelopeSchema = z.custom<SyncOpEnvelope>().superRefine((op, ctx) => {
  if (!isJsonObject(op)) {
    ctx.addIssue({ code: "custom", message: "must be an object", params: { code: "invalid_type" } });
  } else if (op.op_id === undefined) {
    ctx.addIssue({ code: "custom", path: ["op_id"], message: "is required", params: { code: "required" } });
  } else if (typeof op.op_id !== "string" || !isUuid(op.op_id)) {
    ctx.addIssue({ code: "custom", path: ["op_id"], message: "must be a uuid", params: { code: "invalid_format" } });
  }
}).meta({ type: "object", allOf: [{ $ref: "#/components/schemas/SyncOp" }] });

const deviceId = uuidSchema.optional()
  .describe("the installation_id of one of the caller's registered devices (POST /v1/auth/session); defaults to the device the session is bound to. Ops of the same device never conflict with each other");

/** Each op_id once per batch (compared lowercase): a second one could not be answered apart from the first. */
function opIdsOnce(batch: { ops: { op_id: string }[] }, ctx: z.core.$RefinementCtx) {
  const seen = new Set<string>();
  batch.ops.forEach((op, index) => {
    // (zod runs this even when an op failed its own check: such an op was reported there.)
    if (typeof op?.op_id !== "string") return;
    const key = op.op_id.toLowerCase();
    if (seen.has(key)) {
      ctx.addIssue({ code: "custom", path: ["ops", index, "op_id"], message: "appears twice in this batch", params: { code: "duplicate" } });
    }
    seen.add(key);
  });
}

/** A batch as a client sends it (client/, its tests): every op a SyncOp. */
export const syncBatchRequestSchema = z.strictObject({
  device_id: deviceId,
  ops: z.array(syncOpSchema).min(1),
}).superRefine(opIdsOnce);
export type SyncBatchRequest = z.infer<typeof syncBatchRequestSchema>;

/**
 * A batch as the function's edge checks it (POST /v1/sync/batch): the envelope whole, each op
 * only as far as syncOpEnvelopeSchema does; a wrong op is that op's `rejected`, never the batch's
 * 400 (api-v1.md: one bad op never blocks a batch).
 */
export const syncBatchEnvelopeSchema = z.strictObject({
  device_id: deviceId,
  ops: z.array(syncOpEnvelopeSchema).min(1)
    .describe("at most limits.max_ops_per_batch (413 PAYLOAD_TOO_LARGE beyond); an op that is not a SyncOp is rejected on its own (VALIDATION_FAILED), only an op that is not an object or has no uuid op_id, or an op_id twice, fails the batch (400)"),
}).superRefine(opIdsOnce);
export type SyncBatchEnvelope = z.infer<typeof syncBatchEnvelopeSchema>;

/**
 * Why an op was rejected: VALIDATION_FAILED (unknown collection, data against
 * the table's columns and constraints, data on a delete, base_version ahead
 * of the server), PAYLOAD_TOO_LARGE (the record's data over
 * max_record_data_bytes), QUOTA_EXCEEDED (over max_live_records_per_user),
 * FORBIDDEN (the caller may read the row or scope but not make this change,
 * e.g. a viewer), NOT_FOUND (no such row or scope the caller can see: an
 * unknown id and another user's id answer alike).
 */
export const syncOpErrorCodeSchema = z.enum(["VALIDATION_FAILED", "PAYLOAD_TOO_LARGE", "QUOTA_EXCEEDED", "FORBIDDEN", "NOT_FOUND"]);
export type SyncOpErrorCode = z.infer<typeof syncOpErrorCodeSchema>;

export const syncOpErrorSchema = z.object({
  code: syncOpErrorCodeSchema,
  message: z.string(),
  details: z.array(fieldDetailSchema).optional(),
});
export type SyncOpError = z.infer<typeof syncOpErrorSchema>;

export const syncOpStatusSchema = z.enum(["applied", "duplicate", "conflict", "rejected"]);
export type SyncOpStatus = z.infer<typeof syncOpStatusSchema>;

export const syncOpResultSchema = z.object({
  op_id: uuidSchema,
  status: syncOpStatusSchema,
  original_status: z.enum(["applied", "conflict", "rejected"]).optional()
    .describe("duplicate only: the status this op_id got when it was first processed (its error is from then too)"),
  original_version: version.optional()
    .describe("duplicate only: the record version this op_id's first processing wrote (absent when it wrote none); ops the client queued behind it are based on it"),
  record: syncRecordSchema.optional()
    .describe("applied: the new server state (absent when the batch created the record and deleted it again: the server holds none of it); conflict: the current server state to rebase on; duplicate and rejected: the current server state when the caller can see the record (absent: the caller cannot see it, or it never existed; drop the local copy)"),
  conflicting_fields: z.array(z.string()).optional()
    .describe("conflict only: the fields another device changed since base_version that this op also sets (for a delete: every field changed since base_version); [\"*\"] when the record was deleted since base_version"),
  error: syncOpErrorSchema.optional().describe("rejected: why; duplicate of a rejected op: why it was rejected then, its pointers naming this op's index in this request"),
});
export type SyncOpResult = z.infer<typeof syncOpResultSchema>;

export const syncBatchResponseSchema = z.object({
  results: z.array(syncOpResultSchema).describe("one per op, in request order"),
  server_time: serverTimeSchema,
});
export type SyncBatchResponse = z.infer<typeof syncBatchResponseSchema>;

// ------------------------------------------------------ GET /v1/sync/changes
// (appended by the pull side; the push side owns everything above, hence this
// import down here: ES imports are hoisted wherever they stand)
import { CURSOR_NOT_ISSUED, MAX_CURSOR_LENGTH } from "../cursor-length.ts";
import { DEFAULT_LIMITS } from "../limits.ts";

/** One entry of a pull: a record in its latest state; a delete is `deleted: true, data: null`. */
export const changeSchema = syncRecordSchema;
export type Change = SyncRecord;

export interface ChangesQueryBounds {
  default_pull_limit: number;
  max_pull_limit: number;
  max_collections_per_pull: number;
}

/** Most digits a `limit` may have (leading zeros included): its text is read as a number only up to this. */
const LIMIT_DIGITS = 9;

/**
 * A regular expression (JSON Schema's `pattern`) of exactly the texts of at most `digits` digits whose
 * value is in 1..max: per count of significant digits, up to as many leading zeros as fit; e.g. for
 * 1000 and 9, ^(?:0{0,8}[1-9]|0{0,7}[1-9][0-9]|0{0,6}[1-9][0-9]{2}|0{0,5}1000)$.
 */
export function wholeNumberPattern(max: number, digits: number): string {
  const top = String(max);
  if (!Number.isSafeInteger(max) || max < 1 || top.length > digits) throw new Error(`no pattern for 1..${max} in ${digits} digits`);
  const any = (count: number) => (count === 0 ? "" : count === 1 ? "[0-9]" : `[0-9]{${count}}`);
  const range = (lo: number, hi: number) => (lo === hi ? String(lo) : `[${lo}-${hi}]`);
  const zeros = (significant: number) => (digits === significant ? "" : `0{0,${digits - significant}}`);
  const alternatives: string[] = [];
  // Fewer significant digits than max: any such number.
  for (let length = 1; length < top.length; length++) alternatives.push(`${zeros(length)}[1-9]${any(length - 1)}`);
  // As many: max's first i digits, then a smaller one, then any; or max itself.
  const same: string[] = [];
  for (let i = 0; i < top.length; i++) {
    const lowest = i === 0 ? 1 : 0;
    const digit = Number(top[i]);
    if (digit - 1 >= lowest) same.push(`${top.slice(0, i)}${range(lowest, digit - 1)}${any(top.length - i - 1)}`);
  }
  same.push(top);
  const sameLength = same.length === 1 ? same[0] : `(?:${same.join("|")})`;
  alternatives.push(`${zeros(top.length)}${sameLength}`);
  return `^(?:${alternatives.join("|")})$`;
}

/**
 * The query of GET /v1/sync/changes for a deployment's limits (GET /v1/meta)
 * and collections; `knownCollections: null` leaves names unchecked.
 * `collections` parses into the sorted distinct names; `limit` into a number.
 */
export function changesQuerySchemaFor(bounds: ChangesQueryBounds, knownCollections: readonly string[] | null) {
  const known = knownCollections === null ? null : new Set(knownCollections);
  return z.strictObject({
    // Longer than any the server issues: 400 INVALID_CURSOR (cursor-length.ts), refused with the query.
    cursor: z.string()
      .refine((cursor) => cursor.length <= MAX_CURSOR_LENGTH, { message: `at most ${MAX_CURSOR_LENGTH} characters`, params: CURSOR_NOT_ISSUED })
      .meta({ maxLength: MAX_CURSOR_LENGTH })
      .optional()
      .describe("opaque cursor of the previous page; absent → a full sync of every live record; one this server did not issue (altered, another user's, longer than maxLength) → 400 INVALID_CURSOR"),
    limit: digitsParam(LIMIT_DIGITS)
      // Published as the texts taken, bounds included (the checks below, which name the bound broken, are not JSON Schema's).
      .meta({ pattern: wholeNumberPattern(bounds.max_pull_limit, LIMIT_DIGITS) })
      .transform(Number)
      .pipe(z.number().int().min(1).max(bounds.max_pull_limit))
      .optional()
      .transform((value) => value ?? bounds.default_pull_limit)
      .describe(`changes per page, 1..${bounds.max_pull_limit} (limits.max_pull_limit); default ${bounds.default_pull_limit}`),
    collections: z.string()
      .transform((value, ctx) => {
        const names = value.split(",");
        if (names.some((name) => name === "")) {
          ctx.addIssue({ code: "custom", message: "must be comma-separated collection names without empty entries", params: { code: "invalid_format" } });
          return z.NEVER;
        }
        const distinct = [...new Set(names)].sort();
        if (distinct.length > bounds.max_collections_per_pull) {
          ctx.addIssue({ code: "custom", message: `at most ${bounds.max_collections_per_pull} collections`, params: { code: "too_long" } });
          return z.NEVER;
        }
        const unknown = known === null ? [] : distinct.filter((name) => !known.has(name));
        if (unknown.length > 0) {
          addUnknownCollections(ctx, unknown);
          return z.NEVER;
        }
        return distinct;
      })
      .optional()
      .describe(`comma-separated collection names to pull, at most ${bounds.max_collections_per_pull} (limits.max_collections_per_pull); absent → all; a cursor works only with the filter it was issued for`),
  });
}

/** The issue of collection names this server does not sync (detail code `unknown_collection`). */
function addUnknownCollections(ctx: z.core.$RefinementCtx, unknown: readonly string[]): void {
  ctx.addIssue({
    code: "custom",
    message: `unknown collection${unknown.length > 1 ? "s" : ""} ${unknown.map((name) => JSON.stringify(name.slice(0, 64))).join(", ")}`,
    params: { code: "unknown_collection" },
  });
}

/** The query with the contract's default limits and no collection check (for documentation and clients). */
export const changesQuerySchema = changesQuerySchemaFor(DEFAULT_LIMITS, null);
export type ChangesQueryInput = z.input<typeof changesQuerySchema>;
export type ChangesQuery = z.output<typeof changesQuerySchema>;

export const changesResponseSchema = z.object({
  changes: z.array(changeSchema).describe("in commit order; each record at most once per page, in its latest state"),
  cursor: z.string().describe("opaque; send it as ?cursor= for the next page or the next sync (with the same collections)"),
  has_more: z.boolean().describe("true: pull again now with this cursor; false: up to date as of server_time"),
  // A default, not required: a client may still talk to a server from before the flag existed.
  reset: z.boolean().default(false).describe(
    "true on the first page of a full sync (a pull without a cursor), and only there: the pages of this sync, up to the one " +
      "with has_more false, list every record the caller can see, and nothing they cannot; drop every local record of the " +
      "pulled collections that they do not list (pending local writes stay queued)",
  ),
  server_time: serverTimeSchema,
});
export type ChangesResponse = z.infer<typeof changesResponseSchema>;

// ------------------------------------------ GET /v1/sync/records/{collection}/{id}

/**
 * The path of one record's read for a deployment's collections (`knownCollections: null` leaves
 * names unchecked); the id parses lower-cased. Its answer is a syncRecordSchema: the record as a
 * pull lists it (docs/sync.md, "Read one record").
 */
export function recordParamsSchemaFor(knownCollections: readonly string[] | null) {
  const known = knownCollections === null ? null : new Set(knownCollections);
  return z.strictObject({
    collection: z.string().superRefine((name, ctx) => {
      if (known !== null && !known.has(name)) addUnknownCollections(ctx, [name]);
    }).describe("a synced collection (GET /v1/meta lists them)"),
    id: uuidSchema.describe("the record's id (uuid), compared and returned lowercase"),
  });
}

/**
 * The one detail of its 404 NOT_FOUND, the same for an unknown id and a record the caller may not
 * see: it tells that answer from a server's "no such route" (one from before this route), which
 * carries none, so that a client can tell "no record" from "ask another way".
 */
export const RECORD_NOT_FOUND_DETAIL: FieldDetail = { field: "/id", code: "not_found", message: "no record of this id that you can see" };

/** Whether a NOT_FOUND's details are GET /v1/sync/records' (no such record), not an unknown route's. */
export function isRecordNotFound(details: readonly FieldDetail[] | undefined): boolean {
  return details?.some((d) => d.field === RECORD_NOT_FOUND_DETAIL.field && d.code === RECORD_NOT_FOUND_DETAIL.code) === true;
}

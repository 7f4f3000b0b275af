// The pull cursor of GET /v1/sync/changes: opaque to clients, tamper-evident
// (HMAC-SHA256 with the server's TIDESYNC_CURSOR_SECRET) and bound to the user
// it was issued to and to the collections filter it was issued for.
//
// Wire form: base64url(JSON payload) "." base64url(HMAC). The MAC covers a
// version tag, the user id and the payload text exactly as sent, so changing
// any character of either part, or presenting the cursor as another user,
// fails verification. The user id is only MAC input, never written into the
// cursor. Web Crypto only, so Deno (the function) and Node (tests) share it.
import { MAX_CURSOR_LENGTH } from "../../_shared/cursor-length.ts";
import { z } from "zod";
import { ApiError } from "../../_shared/errors.ts";
import { uuidSchema } from "../../_shared/uuid.ts";
import { CURSOR_SNAPSHOT_PATTERN, isValidSnapshot, isXid8, MAX_SNAPSHOT_TEXT, snapshotBelow } from "./cursor-snapshot.ts";

const MAC_CONTEXT = "tidesync.sync-cursor.v2";
/** Characters of a collection's tag in `synced` (base64url of 6 bytes of a SHA-256: collectionTags). */
const TAG_LENGTH = 8;
/**
 * Most collections a server may sync: `synced` names each in the cursor, and the cursor's length is
 * bounded (npm run generate refuses more synced tables).
 */
export const MAX_SYNCED_COLLECTIONS = 128;
export { MAX_CURSOR_LENGTH };
const CURSOR_SHAPE = /^([A-Za-z0-9_-]{1,2400})\.([A-Za-z0-9_-]{43})$/;

const xid8 = z.string().regex(/^[0-9]{1,20}$/).refine(isXid8);
/** A page's snapshot in the cursor form (cursor-snapshot.ts: pg_snapshot text, its older in-progress ids counted when long). */
const snapshot = z.string().max(MAX_SNAPSHOT_TEXT).regex(CURSOR_SNAPSHOT_PATTERN);
const collection = z.string().max(63);
const common = {
  v: z.literal(2),
  /** Hash of the collections filter the cursor belongs to ("*" = no filter). */
  scope: z.string().min(1).max(64),
  /** Issued at, epoch seconds: a cursor older than the retention window is refused (410). */
  iat: z.number().int().nonnegative(),
  /**
   * app_private.sync_horizon.resyncs when issued (absent: 0): a cursor issued before a later
   * disable_sync is refused (410), its device may hold rows no entry removes any more.
   */
  resyncs: z.number().int().nonnegative().optional(),
  /**
   * The account's auth.users.created_at when issued, epoch microseconds (text: exact): the cursor of an account
   * deleted and created again with the same id (an earlier one) is refused (410), its device may
   * hold rows of lists no entry removes (plan-pull.ts issuedToEarlierAccount). Absent: a cursor
   * from before it (judged by `iat`), or an account without a creation time.
   */
  born: z.string().regex(/^-?[0-9]{1,20}$/).optional(),
  /**
   * The collections the cursor pulls (without a filter: every collection the issuing server synced),
   * each as the issuing server listed it, its name and columns (collectionTags, syncedOf), so that a
   * server syncing others, or other columns of one, neither follows the cursor past rows it never
   * listed so nor lists what it does not know (plan-pull.ts collectionsChange). Absent: a cursor
   * from before it (a filtered one from before columns were bound).
   */
  synced: z.string().max(TAG_LENGTH * MAX_SYNCED_COLLECTIONS).regex(new RegExp(`^(?:[A-Za-z0-9_-]{${TAG_LENGTH}})*$`)).optional(),
};

export const cursorPayloadSchema = z.discriminatedUnion("mode", [
  z.strictObject({
    ...common,
    /** Paging through a full sync of every visible live row, by (scope, collection, id). */
    mode: z.literal("full"),
    /** xmin of the snapshot the full sync started in: afterwards, incremental from there. */
    upper: xid8,
    /** Every key up to here was passed (listed as it stood when its page read it). */
    after: z.tuple([uuidSchema, collection, uuidSchema]),
    /**
     * The previous page's snapshot (pg_snapshot text): the next page also lists the rows of the
     * scopes already passed (keys up to `after`) that a transaction it did not see wrote, or
     * whose scope such a transaction granted (docs/sync.md, "2. A full sync lists every
     * record"). Absent (a cursor from before it): `upper`, as "upper:upper:".
     */
    since: snapshot.optional(),
    /**
     * A catch-up that did not fit on one page: keys up to `catch_up.after` are caught up as of
     * `catch_up.next` (the snapshot of the page that began it); the next pages catch up
     * (catch_up.after, after] since `since`, then go on after `after` with `since` = `next`.
     */
    catch_up: z.strictObject({ after: z.tuple([uuidSchema, collection, uuidSchema]), next: snapshot }).optional(),
  }),
  z.strictObject({
    ...common,
    /** Following changes: every entry at or below `after` (txid, seq, collection, id) was delivered. */
    mode: z.literal("incremental"),
    after: z.tuple([xid8, z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER), collection, uuidSchema]),
  }),
]);
export type CursorPayload = z.infer<typeof cursorPayloadSchema>;

const encoder = new TextEncoder();

function toBase64Url(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

function fromBase64Url(text: string): Uint8Array {
  const binary = atob(text.replaceAll("-", "+").replaceAll("_", "/"));
  return Uint8Array.from(binary, (c) => c.charCodeAt(0));
}

const keys = new Map<string, Promise<CryptoKey>>();
function macKey(secret: string): Promise<CryptoKey> {
  let key = keys.get(secret);
  if (!key) {
    key = crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
    keys.set(secret, key);
  }
  return key;
}

async function mac(secret: string, userId: string, payloadText: string): Promise<string> {
  const signature = await crypto.subtle.sign("HMAC", await macKey(secret), encoder.encode(`${MAC_CONTEXT}\n${userId}\n${payloadText}`));
  return toBase64Url(new Uint8Array(signature));
}

/** Compares two strings in time independent of where they differ. */
function constantTimeEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/**
 * The scope of a collections filter: "*" without a filter, else a short hash
 * of the sorted distinct names (order and repetition do not change it).
 */
export async function collectionsScope(collections: readonly string[] | null): Promise<string> {
  if (collections === null) return "*";
  const canonical = [...new Set(collections)].sort().join("\n");
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", encoder.encode(canonical)));
  return toBase64Url(digest.subarray(0, 16));
}

/**
 * A synced collection as a pull lists it: its name and its table's columns (the id left out), each
 * with its type as `format_type` prints it and its enum's labels in order (null: not an enum), as
 * `npm run generate` reads them, and as the database has them now (pull-store.ts databaseShapes).
 */
export interface CollectionShape {
  name: string;
  columns: readonly { name: string; type: string; enum_values?: readonly string[] | null }[];
}

/** The text a collection's tag hashes: its name, then one line per column (name, type, enum labels), sorted. */
export function shapeText(shape: CollectionShape): string {
  return [JSON.stringify(shape.name), ...shape.columns.map((c) => JSON.stringify([c.name, c.type, c.enum_values ?? null])).sort()].join("\n");
}

/** 48 bits of the text's SHA-256, base64url (a collision among a server's collections is ~2^-35 likely at most). */
async function tagOf(text: string): Promise<string> {
  return toBase64Url(new Uint8Array(await crypto.subtle.digest("SHA-256", encoder.encode(text))).subarray(0, 6));
}

/** Each collection's tag, of its name and columns (what a cursor's `synced` names: a deploy that adds, drops, renames or retypes a column, or renames an enum label, changes it). */
export async function collectionTags(shapes: readonly CollectionShape[]): Promise<Map<string, string>> {
  const tags = await Promise.all(shapes.map((shape) => tagOf(shapeText(shape))));
  return new Map(shapes.map((shape, i) => [shape.name, tags[i]]));
}

/** A cursor's `synced` of these tags: sorted, concatenated. */
export function syncedOf(tags: Iterable<string>): string {
  return [...new Set(tags)].sort().join("");
}

/** The tags in a cursor's `synced`. */
export function tagsOf(synced: string): string[] {
  return synced.match(new RegExp(`.{${TAG_LENGTH}}`, "g")) ?? [];
}

export async function encodeCursor(secret: string, userId: string, payload: CursorPayload): Promise<string> {
  const payloadText = toBase64Url(encoder.encode(JSON.stringify(cursorPayloadSchema.parse(payload))));
  return `${payloadText}.${await mac(secret, userId, payloadText)}`;
}

const INVALID = "the cursor was not issued by this server for this user, or it was altered; pull again without a cursor";

/** The 400 INVALID_CURSOR of any cursor this server did not issue to the caller, one message for all. */
export function invalidCursor(): ApiError {
  return new ApiError("INVALID_CURSOR", INVALID);
}

/**
 * Verifies a cursor for `userId` and returns its payload; anything else
 * (malformed, altered, another user's, another secret's) is 400 INVALID_CURSOR,
 * with one message for all so the answer reveals nothing about other users.
 */
export async function decodeCursor(secret: string, userId: string, cursor: string): Promise<CursorPayload> {
  const match = cursor.length <= MAX_CURSOR_LENGTH ? CURSOR_SHAPE.exec(cursor) : null;
  if (!match) throw invalidCursor();
  const [, payloadText, givenMac] = match;
  // The MAC is checked over the text as sent, before anything is decoded.
  if (!constantTimeEqual(await mac(secret, userId, payloadText), givenMac)) throw invalidCursor();
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(fromBase64Url(payloadText)));
  } catch {
    throw invalidCursor();
  }
  const result = cursorPayloadSchema.safeParse(parsed);
  if (!result.success) throw invalidCursor();
  // Signed but a snapshot Postgres would refuse: refused here, not a 500 from the page statement.
  const payload = result.data;
  const snapshots = payload.mode === "full" ? [payload.since ?? snapshotBelow(payload.upper), ...(payload.catch_up ? [payload.catch_up.next] : [])] : [];
  if (!snapshots.every(isValidSnapshot)) throw invalidCursor();
  return payload;
}

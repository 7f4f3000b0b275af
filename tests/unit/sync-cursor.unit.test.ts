// The pull cursor codec: what it issues it accepts (for the same user and
// secret only), and any alteration is refused as INVALID_CURSOR.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ApiError } from "../../functions/_shared/errors.ts";
import { DEFAULT_LIMITS } from "../../functions/_shared/limits.ts";
import { changesQuerySchemaFor } from "../../functions/_shared/schemas/sync.ts";
import { loadConfig } from "../../functions/api/lib/config.ts";
import { refuseTooManyCollections } from "../../scripts/generate/sync-collection-checks.ts";
import { MAX_SNAPSHOT_TEXT } from "../../functions/api/sync/cursor-snapshot.ts";
import {
  collectionsScope,
  collectionTags,
  shapeText,
  type CursorPayload,
  decodeCursor,
  encodeCursor,
  MAX_CURSOR_LENGTH,
  MAX_SYNCED_COLLECTIONS,
  syncedOf,
  tagsOf,
} from "../../functions/api/sync/cursor.ts";

const SECRET = "unit-test-secret-unit-test-secret-0123456789";
const ALICE = "7b0c1a5e-3d55-4d5e-9a43-0a8f8c7b1d01";
const BOB = "c2d7e8f9-1a2b-4c3d-8e9f-0a1b2c3d4e5f";

const MAX_XID8 = (1n << 64n) - 1n;
const xid8 = fc.bigInt({ min: 1n, max: MAX_XID8 }).map(String);
const uuid = fc.uuid().map((u) => u.toLowerCase());
const collection = fc.constantFrom("", "lists", "tasks");
const synced = fc.option(fc.array(fc.stringMatching(/^[A-Za-z0-9_-]{8}$/), { maxLength: 4 }).map((tags) => tags.join("")), { nil: undefined });
const common = { v: fc.constant(2 as const), scope: fc.constantFrom("*", "abcdefghijklmnopqrstuv"), iat: fc.integer({ min: 0, max: 4_000_000_000 }), synced };
/**
 * pg_snapshot text as Postgres prints it, "xmin:xmax:xip,…" (xip ascending, in [xmin, xmax)), maybe with
 * in-progress ids counted ("+count@lo-hi", or as cursors issued before, "+count@hi": cursor-snapshot.ts)
 */
const snapshot = fc.tuple(
  fc.bigInt({ min: 1n, max: MAX_XID8 - 2000n }),
  fc.uniqueArray(fc.bigInt({ min: 0n, max: 999n }), { maxLength: 3 }),
  fc.bigInt({ min: 1000n, max: 2000n }),
  fc.option(fc.tuple(fc.integer({ min: 1, max: 2 ** 31 - 1 }), fc.boolean(), fc.bigInt({ min: 0n, max: 999n }), fc.bigInt({ min: 0n, max: 999n })), { nil: null }),
).map(([xmin, offsets, span, counted]) => {
  const xip = offsets.sort((a, b) => (a < b ? -1 : 1)).map((d) => xmin + d);
  const range = counted && (counted[1] ? `${xmin + (counted[2] < counted[3] ? counted[2] : counted[3])}-` : "");
  const hi = counted && xmin + (counted[2] < counted[3] ? counted[3] : counted[2]);
  return `${xmin}:${xmin + span}:${xip.join(",")}${counted ? `+${counted[0]}@${range}${hi}` : ""}`;
}).filter((text) => text.length <= MAX_SNAPSHOT_TEXT);
const payloadArb: fc.Arbitrary<CursorPayload> = fc.oneof(
  fc.record({ ...common, mode: fc.constant("full" as const), upper: xid8, after: fc.tuple(uuid, collection, uuid) }, { requiredKeys: ["v", "scope", "iat", "mode", "upper", "after"] }),
  fc.record({
    ...common,
    mode: fc.constant("full" as const),
    upper: xid8,
    after: fc.tuple(uuid, collection, uuid),
    since: snapshot,
    catch_up: fc.option(fc.record({ after: fc.tuple(uuid, collection, uuid), next: snapshot }), { nil: undefined }),
  }, { requiredKeys: ["v", "scope", "iat", "mode", "upper", "after", "since"] }),
  fc.record({ ...common, mode: fc.constant("incremental" as const), after: fc.tuple(xid8, fc.maxSafeNat(), collection, uuid) }, {
    requiredKeys: ["v", "scope", "iat", "mode", "after"],
  }),
);
const ZERO = "00000000-0000-0000-0000-000000000000";
const incremental = (txid: string): CursorPayload => ({ v: 2, mode: "incremental", after: [txid, 0, "", ZERO], scope: "*", iat: 1 });

async function rejection(promise: Promise<unknown>): Promise<string | undefined> {
  try {
    await promise;
    return undefined;
  } catch (error) {
    return error instanceof ApiError ? error.code : String(error);
  }
}

const BASE64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

describe("sync cursor codec", () => {
  it("decodes what it encodes, for the same user and secret", async () => {
    await fc.assert(fc.asyncProperty(payloadArb, async (payload) => {
      const cursor = await encodeCursor(SECRET, ALICE, payload);
      expect(await decodeCursor(SECRET, ALICE, cursor)).toEqual(payload);
    }), { numRuns: 200 });
  });

  it("takes the longest cursor the server issues: a full sync catching up, with 63-character collection names, the longest snapshots and the most synced collections", async () => {
    const u = "ffffffff-ffff-ffff-ffff-ffffffffffff";
    const name = "c".repeat(63);
    // As long as a snapshot may be, and valid: ascending in-progress ids, the largest xid8 as xmax.
    const top = ((1n << 64n) - 1n).toString();
    const longest = `1:${top}:${["1".padEnd(13, "0"), ...[0n, 1n, 2n, 3n].map((i) => (10n ** 19n + i).toString())].join(",")}`;
    expect(longest).toHaveLength(MAX_SNAPSHOT_TEXT);
    const names = Array.from({ length: MAX_SYNCED_COLLECTIONS + 1 }, (_, i) => `${name.slice(0, 60)}${i}`);
    const tags = [...(await collectionTags(names.map((n) => ({ name: n, columns: [] })))).values()];
    const payload: CursorPayload = {
      v: 2, mode: "full", upper: top, after: [u, name, u], since: longest, catch_up: { after: [u, name, u], next: longest },
      scope: await collectionsScope(names.slice(1)), iat: 4_000_000_000, resyncs: 2 ** 31, born: "-9223372036854775808",
      synced: syncedOf(tags.slice(1)),
    };
    const cursor = await encodeCursor(SECRET, ALICE, payload);
    expect(cursor.length).toBeLessThanOrEqual(MAX_CURSOR_LENGTH);
    expect(await decodeCursor(SECRET, ALICE, cursor)).toEqual(payload);
    // and GET /v1/sync/changes's query takes it (it refused cursors over 2,048 characters: a
    // device's full sync stopped at a 400 it could not get past)
    expect(changesQuerySchemaFor(DEFAULT_LIMITS, null).safeParse({ cursor }).success).toBe(true);
    // A longer snapshot is never issued (pull-store.ts shortens it) and never accepted; nor more synced collections.
    await expect(encodeCursor(SECRET, ALICE, { ...payload, since: `${longest},1` })).rejects.toThrow();
    await expect(encodeCursor(SECRET, ALICE, { ...payload, synced: syncedOf(tags) })).rejects.toThrow();
  });

  it("npm run generate refuses more synced tables than the longest cursor names", () => {
    const names = Array.from({ length: MAX_SYNCED_COLLECTIONS + 1 }, (_, i) => `t${i}`);
    expect(() => refuseTooManyCollections(names.slice(1))).not.toThrow();
    expect(() => refuseTooManyCollections(names)).toThrow(`at most ${MAX_SYNCED_COLLECTIONS}`);
  });

  it("names each synced collection by a tag of its name and columns: sorted, the order and repetition of the collections and columns change nothing", async () => {
    const task = { name: "tasks", columns: [{ name: "title", type: "text" }, { name: "done", type: "boolean" }] };
    const shapes = [task, { name: "lists", columns: [{ name: "name", type: "text" }] }, { name: "list_members", columns: [] }];
    const tagsOf3 = async (of: typeof shapes) => [...(await collectionTags(of)).values()];
    const tags = await tagsOf3(shapes);
    expect(new Set(tags).size).toBe(3);
    const synced = syncedOf(tags);
    expect(tagsOf(synced)).toEqual([...tags].sort());
    expect(syncedOf(await tagsOf3([shapes[1], shapes[2], { ...task, columns: [...task.columns].reverse() }, shapes[1]]))).toBe(synced);
    expect(tagsOf("")).toEqual([]);
  });

  it("a collection's tag changes with a column added, dropped, renamed or retyped, or an enum label renamed", async () => {
    type Columns = { name: string; type: string; enum_values?: string[] | null }[];
    const columns: Columns = [{ name: "title", type: "text" }, { name: "status", type: "status", enum_values: ["todo", "done"] }];
    const tag = async (cols: Columns) => (await collectionTags([{ name: "tasks", columns: cols }])).get("tasks")!;
    const before = await tag(columns);
    const variants: Columns[] = [
      [...columns, { name: "priority", type: "integer" }],
      columns.slice(1),
      [{ name: "name", type: "text" }, columns[1]],
      [{ name: "title", type: "character varying(200)" }, columns[1]],
      [columns[0], { ...columns[1], enum_values: ["open", "done"] }],
      // a name and type that run together are still two things
      [{ name: "title text", type: "" }, columns[1]],
    ];
    for (const variant of variants) expect(await tag(variant)).not.toBe(before);
    // the columns' order, and an absent enum list against null, change nothing
    expect(await tag([columns[1], { ...columns[0], enum_values: null }])).toBe(before);
    expect(shapeText({ name: "tasks", columns })).toBe(shapeText({ name: "tasks", columns: [...columns].reverse() }));
  });

  it("is opaque: the user id is not in the cursor", async () => {
    const cursor = await encodeCursor(SECRET, ALICE, { v: 2, mode: "incremental", after: ["42", 7, "tasks", BOB], scope: "*", iat: 1 });
    const text = Buffer.from(cursor.split(".")[0], "base64url").toString("utf8");
    expect(text).not.toContain(ALICE);
    expect(cursor).not.toContain(ALICE);
  });

  it("rejects a cursor with any single character changed", async () => {
    await fc.assert(fc.asyncProperty(payloadArb, fc.nat(), fc.nat(), async (payload, position, replacement) => {
      const cursor = await encodeCursor(SECRET, ALICE, payload);
      const at = position % cursor.length;
      const candidates = [...BASE64URL, "."].filter((c) => c !== cursor[at]);
      const tampered = cursor.slice(0, at) + candidates[replacement % candidates.length] + cursor.slice(at + 1);
      expect(await rejection(decodeCursor(SECRET, ALICE, tampered))).toBe("INVALID_CURSOR");
    }), { numRuns: 500 });
  });

  it("rejects every one-character change of the last MAC character (no non-canonical base64 slack)", async () => {
    const cursor = await encodeCursor(SECRET, ALICE, { v: 2, mode: "full", upper: "7", after: [ZERO, "", ZERO], scope: "*", iat: 1 });
    for (const c of BASE64URL) {
      if (c === cursor.at(-1)) continue;
      expect(await rejection(decodeCursor(SECRET, ALICE, cursor.slice(0, -1) + c))).toBe("INVALID_CURSOR");
    }
  });

  it("rejects truncated, extended and re-signed cursors", async () => {
    const cursor = await encodeCursor(SECRET, ALICE, incremental("9"));
    for (const bad of [cursor.slice(0, -1), cursor + "A", cursor.slice(1), "", ".", "x".repeat(600), cursor.replace(".", "")]) {
      expect(await rejection(decodeCursor(SECRET, ALICE, bad))).toBe("INVALID_CURSOR");
    }
    // A payload with a raised position and the old MAC.
    const forgedPayload = Buffer.from(JSON.stringify(incremental("10"))).toString("base64url");
    expect(await rejection(decodeCursor(SECRET, ALICE, `${forgedPayload}.${cursor.split(".")[1]}`))).toBe("INVALID_CURSOR");
  });

  it("rejects another user's cursor and another secret's cursor", async () => {
    const cursor = await encodeCursor(SECRET, ALICE, incremental("9"));
    expect(await rejection(decodeCursor(SECRET, BOB, cursor))).toBe("INVALID_CURSOR");
    expect(await rejection(decodeCursor(SECRET + "x", ALICE, cursor))).toBe("INVALID_CURSOR");
  });

  it("rejects a correctly signed payload that is not a valid cursor (including the old v1 shape)", async () => {
    // Signed with the real key (as a server bug might), but not the schema: still refused.
    const { subtle } = globalThis.crypto;
    const key = await subtle.importKey("raw", new TextEncoder().encode(SECRET), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
    const signed = async (payload: unknown) => {
      const payloadText = Buffer.from(JSON.stringify(payload)).toString("base64url");
      const mac = Buffer.from(await subtle.sign("HMAC", key, new TextEncoder().encode(`tidesync.sync-cursor.v2\n${ALICE}\n${payloadText}`))).toString("base64url");
      return `${payloadText}.${mac}`;
    };
    // The same framing is accepted for a valid payload, so the refusals below are the schema's.
    expect(await decodeCursor(SECRET, ALICE, await signed(incremental("5")))).toEqual(incremental("5"));
    const full = { v: 2, mode: "full", upper: "5", after: [ZERO, "", ZERO], since: "5:50:6,7+1@8-10", catch_up: { after: [ZERO, "", ZERO], next: "5:5:" }, scope: "*", iat: 1 };
    expect(await decodeCursor(SECRET, ALICE, await signed(full))).toEqual(full);
    for (const bad of [
      { v: 1, mode: "incremental", seq: 10, floor: 10, scope: "*", iat: 1 },
      { ...incremental("5"), after: ["-1", 0, "", ZERO] },
      { ...incremental("5"), after: ["5", -1, "", ZERO] },
      { ...incremental("5"), after: ["5", 0, "", "NOT-A-UUID"] },
      { v: 2, mode: "full", after: [ZERO, "", ZERO], scope: "*", iat: 1 },
      { v: 2, mode: "full", upper: "5", after: [ZERO, "", ZERO], since: "5", scope: "*", iat: 1 },
      { v: 2, mode: "full", upper: "5", after: [ZERO, "", ZERO], since: "5:6:", catch_up: { after: [ZERO, "", ZERO] }, scope: "*", iat: 1 },
      { ...incremental("5"), extra: true },
      { ...incremental("18446744073709551616") },
      { v: 2, mode: "full", upper: "18446744073709551616", after: [ZERO, "", ZERO], scope: "*", iat: 1 },
      // What Postgres refuses as a pg_snapshot, or the page statement cannot rebuild (cursor-snapshot.ts isValidSnapshot)
      { v: 2, mode: "full", upper: "0", after: [ZERO, "", ZERO], scope: "*", iat: 1 },
      ...["0:6:", "6:5:", "5:10:10", "5:10:7,6", "5:50:+1@4-10", "5:50:+0@6-10", "5:50:+2147483648@6-10", "5:50:+1@10-6", "5:50:+1@6-50", "5:18446744073709551616:"].flatMap((bad) => [
        { v: 2, mode: "full", upper: "5", after: [ZERO, "", ZERO], since: bad, scope: "*", iat: 1 },
        { v: 2, mode: "full", upper: "5", after: [ZERO, "", ZERO], since: "5:6:", catch_up: { after: [ZERO, "", ZERO], next: bad }, scope: "*", iat: 1 },
      ]),
    ]) {
      expect(await rejection(decodeCursor(SECRET, ALICE, await signed(bad)))).toBe("INVALID_CURSOR");
    }
  });

  it("scopes collections filters independently of order and repetition", async () => {
    expect(await collectionsScope(null)).toBe("*");
    const a = await collectionsScope(["tasks", "lists"]);
    expect(await collectionsScope(["lists", "tasks", "lists"])).toBe(a);
    expect(await collectionsScope(["lists"])).not.toBe(a);
    expect(a).toMatch(/^[A-Za-z0-9_-]{22}$/);
  });
});

describe("TIDESYNC_CURSOR_SECRET", () => {
  const env = { SUPABASE_DB_URL: "postgres://u@127.0.0.1:5432/db", SUPABASE_JWT_SECRET: "x".repeat(32) };

  it("is required at start-up, with a message that says what to set", () => {
    expect(() => loadConfig(env)).toThrow(/TIDESYNC_CURSOR_SECRET is required/);
    expect(() => loadConfig({ ...env, TIDESYNC_CURSOR_SECRET: "too-short" })).toThrow(/at least 32/);
    expect(loadConfig({ ...env, TIDESYNC_CURSOR_SECRET: SECRET }).cursorSecret).toBe(SECRET);
  });
});

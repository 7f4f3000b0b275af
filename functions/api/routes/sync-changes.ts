// GET /v1/sync/changes: the pull side of sync (docs/sync.md). Without a
// cursor a full sync of every row the caller can see, then the changes after
// the cursor; the cursor decisions are plan-pull.ts's, the SQL pull-store.ts's.
import { createRoute } from "@hono/zod-openapi";
import { allCollections, collectionNames } from "../../_shared/collections.ts";
import { ApiError } from "../../_shared/errors.ts";
import { changesQuerySchemaFor, changesResponseSchema } from "../../_shared/schemas/sync.ts";
import type { App, Deps } from "../lib/app-env.ts";
import { requireUser } from "../lib/middleware.ts";
import { AUTHENTICATED_ERRORS, bearerSecurity, errorResponses } from "../lib/openapi-helpers.ts";
import { collectionsScope, collectionTags, type CursorPayload, decodeCursor, encodeCursor, syncedOf, tagsOf } from "../sync/cursor.ts";
import {
  accountResyncRequired,
  collectionsChangedSince,
  collectionsChange,
  issuedByNewerFunction,
  issuedDuringRollout,
  issuedToEarlierAccount,
  nextPosition,
  pageRequestFor,
  resyncRequired,
} from "../sync/plan-pull.ts";
import { databaseShapes, passedRowsOf, readChangesPage } from "../sync/pull-store.ts";
import { inStep } from "../sync/schema-drift.ts";

const utf8 = new TextEncoder();
const COMMA = 0x2c;

/** `before` + `[` + the entries joined by commas + `]` + `after`, as one UTF-8 byte array. */
function arrayBody(before: string, entries: Uint8Array[], after: string): Uint8Array<ArrayBuffer> {
  const head = utf8.encode(`${before}[`);
  const tail = utf8.encode(`]${after}`);
  const size = entries.reduce((sum, entry) => sum + entry.length, head.length + tail.length + Math.max(entries.length - 1, 0));
  const body = new Uint8Array(size);
  body.set(head);
  let offset = head.length;
  entries.forEach((entry, i) => {
    if (i > 0) body[offset++] = COMMA;
    body.set(entry, offset);
    offset += entry.length;
  });
  body.set(tail, offset);
  return body;
}

const synced = (tags: ReadonlyMap<string, string>) => ({ tags, text: syncedOf(tags.values()) });
/** This server's collections, name → tags (their names and columns as generated: cursor.ts collectionTags), and the `synced` of an unfiltered pull's cursors. */
const ALL = collectionTags(allCollections().map((c) => ({ name: c.name, columns: c.fields }))).then(synced);

/** The tags of the collections a pull lists (all without a filter), and the `synced` of the cursors it issues. */
async function syncedFor(collections: readonly string[] | null) {
  const all = await ALL;
  return collections === null ? all : synced(new Map([...all.tags].filter(([name]) => collections.includes(name))));
}

export function registerSyncChangesRoutes(app: App, deps: Deps): void {
  const { limits, cursorSecret } = deps.config;
  const getChanges = createRoute({
    method: "get",
    path: "/v1/sync/changes",
    summary: "Pull the caller's changes: a full sync without a cursor, then incremental pages after it",
    description: "Follow `cursor` while `has_more` is true. A cursor is bound to the user and to the `collections` filter it was " +
      "issued with (without one, to the collections the server synced), and to those collections' columns as the server synced them. 410 RESYNC_REQUIRED when the cursor is older than the " +
      "tombstone horizon, predates a collection the server now syncs or a change of its columns, or was issued to an earlier account with this user id; " +
      "503 UNAVAILABLE while a newer version of the server issued it (a deploy under way). See docs/sync.md.",
    security: bearerSecurity,
    middleware: [requireUser(deps, "sync.pull")] as const,
    request: { query: changesQuerySchemaFor(limits, collectionNames()) },
    responses: {
      200: { description: "One page of changes", content: { "application/json": { schema: changesResponseSchema.meta({ id: "ChangesResponse" }) } } },
      ...errorResponses(...AUTHENTICATED_ERRORS, "VALIDATION_FAILED", "INVALID_CURSOR", "RESYNC_REQUIRED"),
    },
  });

  app.openapi(getChanges, async (c) => {
    const user = c.get("user");
    const query = c.req.valid("query");
    const collections = query.collections ?? null;
    const scope = await collectionsScope(collections);
    const nowSeconds = Math.floor(Date.now() / 1000);

    let cursor: CursorPayload | null = null;
    if (query.cursor !== undefined) {
      cursor = await decodeCursor(cursorSecret, user.sub, query.cursor);
      if (cursor.scope !== scope) {
        throw new ApiError("INVALID_CURSOR", "this cursor was issued for another collections filter; send the same collections as when it was issued, or pull without a cursor");
      }
    }
    const request = pageRequestFor(cursor, nowSeconds, limits.retention_days);
    const pulled = await syncedFor(collections);
    // The collections the cursor's server synced, and their columns, against this one's (a deploy that adds or drops one, or changes its columns).
    const { unknown, missing } = cursor === null ? { unknown: [], missing: [] } : collectionsChange(cursor.synced === undefined ? undefined : tagsOf(cursor.synced), pulled.tags);
    // 503 while a collection it pulls is out of step with the database (schema-drift.ts): listing the
    // others alone would move the cursor past that one's changes.
    const page = await inStep(deps.db, collections ?? collectionNames(), () =>
      deps.db.withUser(user, async (tx) => {
        if (unknown.length > 0 && issuedDuringRollout(cursor!, nowSeconds)) {
          const database = new Set((await collectionTags(await databaseShapes(tx))).values());
          if (unknown.some((tag) => database.has(tag))) throw issuedByNewerFunction();
        }
        if (missing.length > 0 && await passedRowsOf(tx, request, missing)) throw collectionsChangedSince(missing);
        return await readChangesPage(tx, request, collections, query.limit, limits.max_pull_page_bytes);
      }));
    // A cursor issued before a disable_sync (docs/sync.md, "Making a table syncable").
    if (cursor !== null && (cursor.resyncs ?? 0) < page.resyncs) throw resyncRequired();
    // A cursor of an earlier account with this user id (docs/sync.md, "An account deleted and created again").
    if (cursor !== null && issuedToEarlierAccount(cursor, page.born)) throw accountResyncRequired();
    const { position, hasMore } = nextPosition(request, page);
    const nextCursor = await encodeCursor(cursorSecret, user.sub, {
      v: 2, ...position, scope, iat: nowSeconds, resyncs: page.resyncs, ...(page.born === null ? {} : { born: page.born }),
      synced: pulled.text,
    } as CursorPayload);

    Object.assign(c.get("logFields"), { changes: page.count, has_more: hasMore, pull_mode: cursor?.mode ?? "start" });
    // Each entry arrives as JSON text from Postgres and is copied in as is,
    // as the bytes Postgres sent (never decoded and re-encoded).
    // A pull without a cursor starts a full sync: its first page tells the client to reset.
    const body = arrayBody('{"changes":', page.entries, `,"cursor":${JSON.stringify(nextCursor)},"has_more":${hasMore},` +
      `"reset":${cursor === null},"server_time":${JSON.stringify(page.serverTime)}}`);
    // Sent as bytes, not through the typed c.json() (which would re-serialise
    // what Postgres built); its shape is changesResponseSchema, asserted by
    // tests/integration/sync-changes.test.ts, hence the cast for the router's types.
    return c.body(body, 200, { "Content-Type": "application/json" }) as never;
  });
}

// GET /v1/sync/changes: the pull side of sync (docs/sync.md). Without a
// cursor a full sync of the caller's live records, then incremental changes
// after the cursor, as keyset pages over (user_id, change_seq). Per user,
// change_seq order is commit order (the sync_heads lock), which is why a
// cursor may safely stand on the highest seq a reader has seen.
import { createRoute } from "@hono/zod-openapi";
import { collectionNames } from "../../_shared/collections.ts";
import { ApiError } from "../../_shared/errors.ts";
import { changesQuerySchemaFor, changesResponseSchema } from "../../_shared/schemas/sync.ts";
import type { App, Deps } from "../lib/app-env.ts";
import { requireUser } from "../lib/middleware.ts";
import { AUTHENTICATED_ERRORS, bearerSecurity, errorResponses } from "../lib/openapi-helpers.ts";
import { collectionsScope, type CursorPayload, decodeCursor, encodeCursor } from "../sync/cursor.ts";
import { readChangesPage } from "../sync/pull-store.ts";

const SECONDS_PER_DAY = 86_400;

function resyncRequired(): ApiError {
  return new ApiError("RESYNC_REQUIRED", "this cursor is older than the changes the server still keeps; discard local synced data and pull again without a cursor");
}

export function registerSyncChangesRoutes(app: App, deps: Deps): void {
  const { limits, cursorSecret } = deps.config;
  const getChanges = createRoute({
    method: "get",
    path: "/v1/sync/changes",
    summary: "Pull the caller's changes: a full sync without a cursor, then incremental pages after it",
    description: "Follow `cursor` while `has_more` is true. A cursor is bound to the user and to the `collections` filter it was " +
      "issued with. 410 RESYNC_REQUIRED when the cursor is older than the tombstone horizon. See docs/sync.md.",
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
      // Tombstones are kept retention_days; a cursor that old may have missed a purged delete.
      if (nowSeconds - cursor.iat > limits.retention_days * SECONDS_PER_DAY) throw resyncRequired();
    }

    const afterSeq = cursor?.seq ?? 0;
    const tombstoneFloor = cursor === null ? null : Math.max(cursor.seq, cursor.floor);
    const page = await deps.db.withUser(user, (tx) =>
      readChangesPage(tx, { userId: user.sub, afterSeq, tombstoneFloor, collections, limit: query.limit }));
    // A purged tombstone above the floor may be a delete the holder needs.
    if (tombstoneFloor !== null && tombstoneFloor < page.purgedThroughSeq) throw resyncRequired();

    let next: Pick<CursorPayload, "mode" | "seq" | "floor">;
    if (!page.hasMore) {
      // Done: every change of this user up to the head's last_seq (same
      // snapshot) is committed and was read, so stand on the head; what the
      // filter or the full sync left out below it is not the caller's concern.
      const seq = Math.max(afterSeq, page.headSeq);
      next = { mode: "incremental", seq, floor: seq };
    } else if (cursor === null || cursor.mode === "full") {
      // A full sync continues: deletes up to the head it started from concern
      // records it never listed.
      next = { mode: "full", seq: page.lastPageSeq ?? afterSeq, floor: cursor === null ? page.headSeq : cursor.floor };
    } else {
      const seq = page.lastPageSeq ?? afterSeq;
      next = { mode: "incremental", seq, floor: seq };
    }
    const nextCursor = await encodeCursor(cursorSecret, user.sub, { v: 1, ...next, scope, iat: nowSeconds });

    Object.assign(c.get("logFields"), { changes: page.count, has_more: page.hasMore, pull_mode: cursor?.mode ?? "start" });
    // The changes array arrives as JSON text from Postgres and is spliced in as is.
    const body = `{"changes":${page.changesJson},"cursor":${JSON.stringify(nextCursor)},"has_more":${page.hasMore},` +
      `"server_time":${JSON.stringify(new Date().toISOString())}}`;
    // Sent as text, not through the typed c.json() (which would re-serialise
    // what Postgres built); its shape is changesResponseSchema, asserted by
    // tests/integration/sync-changes.test.ts, hence the cast for the router's types.
    return c.body(body, 200, { "Content-Type": "application/json" }) as never;
  });
}

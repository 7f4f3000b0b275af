// GET /v1/sync/records/{collection}/{id}: one synced record, as a pull lists it
// (docs/sync.md, "Read one record"), for a client that needs the server's state
// of one record without a listing of its collection (an op refused before the
// server judged it). What the caller may not see answers like an unknown id.
import { createRoute } from "@hono/zod-openapi";
import { collectionNames } from "../../_shared/collections.ts";
import { ApiError } from "../../_shared/errors.ts";
import { RECORD_NOT_FOUND_DETAIL, recordParamsSchemaFor, syncRecordSchema } from "../../_shared/schemas/sync.ts";
import type { App, Deps } from "../lib/app-env.ts";
import { requireUser } from "../lib/middleware.ts";
import { AUTHENTICATED_ERRORS, bearerSecurity, errorResponses } from "../lib/openapi-helpers.ts";
import { readRecord } from "../sync/record-store.ts";
import { inStep } from "../sync/schema-drift.ts";

export function registerSyncRecordsRoutes(app: App, deps: Deps): void {
  const getRecord = createRoute({
    method: "get",
    path: "/v1/sync/records/{collection}/{id}",
    summary: "Read one synced record, in the shape of a pull's entry",
    description: "The record as the caller may see it now, RLS deciding: a live record as a full sync lists it; a record " +
      "deleted within the tombstone horizon (not yet purged, limits.retention_days) in a scope the caller can see as its " +
      "tombstone (`deleted: true, data: null`, the delete's version and time), as an incremental pull lists it. An unknown " +
      "id, a record the caller cannot see (another user's, a list they are not or no longer a member of) and a purged " +
      "tombstone are all the same 404, with the detail `not_found` on `/id` (a 404 without it is an unknown route: a server " +
      "from before this one). Counts against the sync.pull budget. See docs/sync.md.",
    security: bearerSecurity,
    middleware: [requireUser(deps, "sync.pull")] as const,
    request: { params: recordParamsSchemaFor(collectionNames()) },
    responses: {
      200: { description: "The record", content: { "application/json": { schema: syncRecordSchema.meta({ id: "SyncRecord" }) } } },
      ...errorResponses(...AUTHENTICATED_ERRORS, "VALIDATION_FAILED", "NOT_FOUND"),
    },
  });

  app.openapi(getRecord, async (c) => {
    const user = c.get("user");
    const { collection, id } = c.req.valid("param");
    // 503 while the collection's table is out of step with this server (schema-drift.ts).
    const record = await inStep(deps.db, [collection], () => deps.db.withUser(user, (tx) => readRecord(tx, collection, id)));
    Object.assign(c.get("logFields"), { collection, record_id: id, found: record !== null });
    if (record === null) throw new ApiError("NOT_FOUND", "no such record", { details: [RECORD_NOT_FOUND_DETAIL] });
    // JSON text as Postgres printed it (a pull's entry: never decoded and re-encoded); its shape is
    // syncRecordSchema, asserted by tests/integration/sync-record.test.ts, hence the cast.
    return c.body(record, 200, { "Content-Type": "application/json" }) as never;
  });
}

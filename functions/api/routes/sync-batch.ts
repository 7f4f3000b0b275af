// POST /v1/sync/batch: apply a device's queued ops, one result per op in
// request order, atomically and exactly once per (user, op_id).
//
// Whole-batch answers: 413 PAYLOAD_TOO_LARGE when the body or the op count is
// over the limits; 400 VALIDATION_FAILED when the envelope is wrong (not an
// object, unknown keys, no ops, a device_id that is not a uuid, an op that is
// not an object or whose op_id is missing or not a uuid, an op_id twice in the
// batch, a non-finite number outside an op's data): without a well-formed
// op_id an op cannot be answered or made exactly-once. Everything else about
// an op (its record_id, type, base_version, keys, collection, data) is
// answered per op, `rejected` (api-v1.md: one bad op never blocks a batch).
import { createRoute } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import { ApiError } from "../../_shared/errors.ts";
import { syncBatchEnvelopeSchema, syncBatchResponseSchema, syncOpSchema } from "../../_shared/schemas/sync.ts";
import type { App, AppEnv, Deps } from "../lib/app-env.ts";
import { isDeadlockVictim } from "../lib/db.ts";
import { jsonBody, requireUser } from "../lib/middleware.ts";
import { AUTHENTICATED_ERRORS, BODY_ERRORS, bearerSecurity, errorResponses, parsedSynchronously } from "../lib/openapi-helpers.ts";
import { inexactNumbersOfOps } from "../sync/inexact-op-numbers.ts";
import { NOT_READABLE_AFTER_WRITE, permissionsDenied } from "../sync/db-refusal.ts";
import { collectionsOfBatch, pushBatch, StaleBatch } from "../sync/push-store.ts";
import { inStep } from "../sync/schema-drift.ts";

/**
 * The batch without its ops' data: a non-finite or inexact number there is that op's rejection
 * (planBatch), not the batch's 400 (one elsewhere in an op, a base_version say, is).
 */
function withoutOpData(body: unknown): unknown {
  if (typeof body !== "object" || body === null || !Array.isArray((body as { ops?: unknown }).ops)) return body;
  const ops = (body as { ops: unknown[] }).ops.map((op) => {
    if (typeof op !== "object" || op === null || Array.isArray(op)) return op;
    const { data: _data, ...rest } = op as Record<string, unknown>;
    return rest;
  });
  return { ...body, ops };
}

/** 413 for too many ops, before the envelope is validated op by op. */
function opCountLimit(deps: Deps): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const body = c.get("jsonBody");
    const ops = typeof body === "object" && body !== null ? (body as { ops?: unknown }).ops : undefined;
    const max = deps.config.limits.max_ops_per_batch;
    if (Array.isArray(ops) && ops.length > max) {
      throw new ApiError("PAYLOAD_TOO_LARGE", `a batch may carry at most ${max} ops; split it`);
    }
    await next();
  };
}

export function registerSyncBatchRoutes(app: App, deps: Deps): void {
  // The op a client sends, referred to by the request's ops, which the edge checks only for their op_id.
  app.openAPIRegistry.register("SyncOp", syncOpSchema);
  const postSyncBatch = createRoute({
    method: "post",
    path: "/v1/sync/batch",
    summary: "Push a batch of ops: one result per op (applied, duplicate, conflict, rejected), atomically, exactly once per op_id",
    security: bearerSecurity,
    middleware: [requireUser(deps, "sync.batch"), jsonBody(deps, withoutOpData), opCountLimit(deps)] as const,
    request: {
      body: { required: true, content: { "application/json": { schema: parsedSynchronously(syncBatchEnvelopeSchema.meta({ id: "SyncBatchRequest" })) } } },
    },
    responses: {
      200: {
        description: "One result per op, in request order",
        content: { "application/json": { schema: syncBatchResponseSchema.meta({ id: "SyncBatchResponse" }) } },
      },
      ...errorResponses(...AUTHENTICATED_ERRORS, ...BODY_ERRORS),
    },
  });

  app.openapi(postSyncBatch, async (c) => {
    // Each op is the parsed JSON's own object (schemas/sync.ts), so syncOpSchema
    // and the collection's schema report a "__proto__" key like any unknown field.
    const batch = c.req.valid("json");
    const user = c.get("user");
    // The parsed body holds doubles: which of its ops' numbers were read as others, its text says.
    const inexactNumbers = inexactNumbersOfOps(c.get("inexactNumbers") ?? []);
    // 503 while a collection it reads or writes is out of step with the database (schema-drift.ts).
    const needs = collectionsOfBatch(batch.ops);
    const attempt = (replanned: boolean, refusedDeletes?: StaleBatch["refusedDeletes"]) =>
      inStep(deps.db, needs, () => deps.db.withUser(user, (tx) => pushBatch(tx, batch, user, deps.config.limits, inexactNumbers, replanned, refusedDeletes)));
    // A deadlock's victim (40P01: the push and another writer each waited for a lock the other
    // held; Postgres rolled the push's whole transaction back after deadlock_timeout) is run once
    // more in a new transaction, as the client's retry would be, without the 503 and its
    // Retry-After. Once per request: a second one is the 503 (docs/sync.md).
    let deadlockRetried = false;
    const push = async (replanned: boolean, refusedDeletes?: StaleBatch["refusedDeletes"]) => {
      try {
        return await attempt(replanned, refusedDeletes);
      } catch (error) {
        if (deadlockRetried || !isDeadlockVictim(error)) throw error;
        deadlockRetried = true;
        c.get("logFields").deadlock_retried = true;
        return await attempt(replanned, refusedDeletes);
      }
    };
    // Planned again once, in a new transaction, when it wrote a row the caller cannot read back
    // (push-store.ts): the rows changed while it was written; a second time, such a row is the
    // refusal of its ops (not_readable_after_write), never a 503 the client would retry forever.
    // Also when the database refused a scope row's delete the plan counted on, in any pass (the
    // caller demoted between two): known in the next one, where it is never written, so each
    // pass knows one more and they end (so too a delete of a record the batch created, refused when
    // tried: push-store.ts, tryNeverStored); and when a delete of a row it could not lock found the row
    // changed since the read (the merge then sees the change; changed once more in that moment,
    // the batch is a retryable 503).
    let replanned = false;
    let refusedDeletes: StaleBatch["refusedDeletes"] = new Map();
    const replanning = async (): Promise<Awaited<ReturnType<typeof push>>> => {
      try {
        return await push(replanned, refusedDeletes);
      } catch (error) {
        if (!(error instanceof StaleBatch)) throw error;
        if (replanned && [...error.refusedDeletes.keys()].every((key) => refusedDeletes.has(key))) throw error;
        replanned = true;
        refusedDeletes = new Map([...refusedDeletes, ...error.refusedDeletes]);
        return await replanning();
      }
    };
    const { results, now, written, refusals } = await replanning();
    const unreadable = [...new Set(refusals.filter((r) => r.sqlstate === NOT_READABLE_AFTER_WRITE).map((r) => r.collection))].sort();
    const denied = permissionsDenied(refusals);
    const counts: Record<string, number> = { applied: 0, duplicate: 0, conflict: 0, rejected: 0 };
    for (const result of results) counts[result.status] += 1;
    Object.assign(c.get("logFields"), {
      ops: batch.ops.length, ...counts, records_written: written, ...(replanned ? { replanned } : {}),
      // The records the database refused, by SQLSTATE (sync_apply refuses a row for any error of its own).
      ...(refusals.length > 0 ? { db_refusals: [...new Set(refusals.map((r) => r.sqlstate))].sort() } : {}),
      // Grants authenticated lacks on what the write uses (the ops answered FORBIDDEN like a policy's refusal).
      ...(denied.length > 0 ? { db_permission_denied: denied } : {}),
      // The collections whose SELECT policy hid a row their other policies let the caller write.
      ...(unreadable.length > 0 ? { not_readable_after_write: unreadable } : {}),
    });
    return c.json({ results, server_time: now }, 200);
  });
}

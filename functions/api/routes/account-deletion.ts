// POST /v1/users/me/deletion: schedule the caller's account deletion after the
// grace period (no body needed; an optional confirmation); GET: the state; DELETE:
// cancel it. The purge (the DO block of app_private.purge_run_command, pg_cron's) does the deleting.
// docs/account-deletion.md tells the flow and what the grace period allows.
import { createRoute } from "@hono/zod-openapi";
import {
  DELETION_CONFIRMATION,
  deletionRequestSchema,
  deletionScheduledResponseSchema,
  deletionStateResponseSchema,
} from "../../_shared/schemas/account-deletion.ts";
import { cancelDeletion, readDeletion, requestDeletion } from "../account/deletion-store.ts";
import type { App, Deps } from "../lib/app-env.ts";
import { optionalJsonBody, requireUser } from "../lib/middleware.ts";
import { AUTHENTICATED_ERRORS, BODY_ERRORS, bearerSecurity, errorResponses } from "../lib/openapi-helpers.ts";

const PATH = "/v1/users/me/deletion";
const OPERATION = "account.deletion";

export function registerAccountDeletionRoutes(app: App, deps: Deps): void {
  const graceDays = deps.config.limits.account_deletion_grace_days;

  const requestRoute = createRoute({
    method: "post",
    path: PATH,
    summary: "Schedule the deletion of the caller's account",
    description: `Deletes the account and everything that belongs to it after the grace period (\`limits.account_deletion_grace_days\` ` +
      `of GET /v1/meta, default 7 days), unless cancelled before. At once: every other session of the user is signed out (401), ` +
      `push tokens are cleared and none is registered until the request is cancelled. Asking again keeps the first date. ` +
      `The body is optional: none (or {}) is the request; a \`confirm\` that is sent must be exactly "${DELETION_CONFIRMATION}".`,
    security: bearerSecurity,
    middleware: [requireUser(deps, OPERATION), optionalJsonBody(deps)] as const,
    request: {
      body: { required: false, content: { "application/json": { schema: deletionRequestSchema.meta({ id: "AccountDeletionRequest" }) } } },
    },
    responses: {
      202: {
        description: "Scheduled (or already scheduled: the same date)",
        content: { "application/json": { schema: deletionScheduledResponseSchema.meta({ id: "AccountDeletionScheduled" }) } },
      },
      ...errorResponses(...AUTHENTICATED_ERRORS, ...BODY_ERRORS),
    },
  });

  const stateRoute = createRoute({
    method: "get",
    path: PATH,
    summary: "Whether the caller's account is scheduled for deletion",
    description: "An app shows it after sign-in (POST /v1/auth/session also carries it) and offers to cancel.",
    security: bearerSecurity,
    middleware: [requireUser(deps, OPERATION)] as const,
    responses: {
      200: { description: "The state", content: { "application/json": { schema: deletionStateResponseSchema.meta({ id: "AccountDeletionState" }) } } },
      ...errorResponses(...AUTHENTICATED_ERRORS),
    },
  });

  const cancelRoute = createRoute({
    method: "delete",
    path: PATH,
    summary: "Cancel the scheduled deletion of the caller's account",
    description: "Nothing was deleted during the grace period, so nothing is lost; push tokens can be registered again " +
      "(POST /v1/auth/session). 204 also when nothing was scheduled.",
    security: bearerSecurity,
    middleware: [requireUser(deps, OPERATION)] as const,
    responses: {
      204: { description: "No deletion is scheduled any more" },
      ...errorResponses(...AUTHENTICATED_ERRORS),
    },
  });

  app.openapi(requestRoute, async (c) => {
    const user = c.get("user");
    c.req.valid("json");
    // server_time: the database's now() of the transaction that scheduled it.
    const { state, serverTime } = await deps.db.withUser(user, (tx) => requestDeletion(tx, graceDays));
    Object.assign(c.get("logFields"), { deletion: "scheduled" });
    return c.json({ ...state, server_time: serverTime }, 202);
  });

  app.openapi(stateRoute, async (c) => {
    const user = c.get("user");
    const state = await deps.db.withUser(user, (tx) => readDeletion(tx, user.sub));
    // server_time: the database's clock, read by the admission statement (requireUser).
    return c.json({ ...state, server_time: c.get("serverTime") }, 200);
  });

  app.openapi(cancelRoute, async (c) => {
    const user = c.get("user");
    const cancelled = await deps.db.withUser(user, (tx) => cancelDeletion(tx));
    Object.assign(c.get("logFields"), { deletion: cancelled ? "cancelled" : "none" });
    return c.body(null, 204);
  });
}

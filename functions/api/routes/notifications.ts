// GET and PUT /v1/users/me/notifications: the caller's notification
// preference document, versioned (ETag = "<version>", If-Match on PUT).
// docs/notification-preferences.md tells the model and the concurrency rules.
import { createRoute, z } from "@hono/zod-openapi";
import { parseIfMatch, versionEtag } from "../../_shared/etag.ts";
import {
  notificationHistoryQuerySchema,
  notificationHistoryResponseSchema,
  notificationPreferencesPutSchema,
  notificationPreferencesSchema,
} from "../../_shared/schemas/notifications.ts";
import type { App, Deps } from "../lib/app-env.ts";
import { jsonBody, requireUser } from "../lib/middleware.ts";
import { AUTHENTICATED_ERRORS, BODY_ERRORS, bearerSecurity, errorResponses } from "../lib/openapi-helpers.ts";
import { readPreferenceHistory } from "../notifications/preference-history-store.ts";
import { readPreferences, replacePreferences } from "../notifications/preference-store.ts";

const PATH = "/v1/users/me/notifications";

const etagHeader = {
  ETag: { description: "the document's version as a strong entity tag, e.g. \"3\" (\"0\" for the defaults)", schema: { type: "string" as const } },
};

export function registerNotificationsRoutes(app: App, deps: Deps): void {
  const document = { "application/json": { schema: notificationPreferencesSchema.meta({ id: "NotificationPreferences" }) } };

  const getPreferences = createRoute({
    method: "get",
    path: PATH,
    summary: "The caller's notification preferences",
    description: "The defaults (version 0, updated_at null) until the user saves preferences.",
    security: bearerSecurity,
    middleware: [requireUser(deps, "notifications")] as const,
    responses: {
      200: { description: "The document", headers: etagHeader, content: document },
      ...errorResponses(...AUTHENTICATED_ERRORS),
    },
  });

  const putPreferences = createRoute({
    method: "put",
    path: PATH,
    summary: "Replace the caller's notification preferences",
    description: "Replaces the whole document. If-Match is optional: with it (the ETag you read, or `*`) a stale version → 412 " +
      "PRECONDITION_FAILED (also a retry of a PUT that was applied: re-read), and so does one that names no version (empty, " +
      "blank, a weak tag); without it the last write wins. A category " +
      "left out gets its default, not its stored value: send back every category you read. A required category " +
      "(security) must keep one channel on. Every change is recorded in the audit trail (the newest 1,000 are kept).",
    security: bearerSecurity,
    middleware: [requireUser(deps, "notifications"), jsonBody(deps)] as const,
    request: {
      headers: z.object({
        "if-match": z.string().optional().describe("the ETag of the version the change is based on, e.g. \"3\""),
      }),
      body: {
        required: true,
        content: { "application/json": { schema: notificationPreferencesPutSchema.meta({ id: "NotificationPreferencesPut" }) } },
      },
    },
    responses: {
      200: { description: "The new document", headers: etagHeader, content: document },
      ...errorResponses(...AUTHENTICATED_ERRORS, ...BODY_ERRORS, "PRECONDITION_FAILED"),
    },
  });

  const getHistory = createRoute({
    method: "get",
    path: `${PATH}/history`,
    summary: "The caller's notification preference changes, newest first (additive to api-v1)",
    description: "The append-only audit trail, its newest 1,000 changes (an older one is deleted as a change passes the bound): " +
      "when, from which device, old → new. Keyset pages: pass `next_before` as `before`; a page goes on where the last stopped " +
      "while changes prune the oldest, and ends at the oldest kept.",
    security: bearerSecurity,
    middleware: [requireUser(deps, "notifications")] as const,
    request: { query: notificationHistoryQuerySchema },
    responses: {
      200: { description: "One page of changes", content: { "application/json": { schema: notificationHistoryResponseSchema.meta({ id: "NotificationPreferenceHistory" }) } } },
      ...errorResponses(...AUTHENTICATED_ERRORS, "VALIDATION_FAILED"),
    },
  });

  app.openapi(getHistory, async (c) => {
    const user = c.get("user");
    const query = c.req.valid("query");
    const page = await deps.db.withUser(user, (tx) => readPreferenceHistory(tx, user.sub, query));
    Object.assign(c.get("logFields"), { count: page.entries.length });
    return c.json({ ...page, server_time: c.get("serverTime") }, 200);
  });

  app.openapi(getPreferences, async (c) => {
    const user = c.get("user");
    const preferences = await deps.db.withUser(user, (tx) => readPreferences(tx, user.sub));
    return c.json(preferences, 200, { ETag: versionEtag(preferences.version) });
  });

  app.openapi(putPreferences, async (c) => {
    const user = c.get("user");
    const body = c.req.valid("json");
    const ifMatch = parseIfMatch(c.req.header("if-match"));
    const preferences = await deps.db.withUser(user, (tx) => replacePreferences(tx, user.sub, body, ifMatch));
    Object.assign(c.get("logFields"), { version: preferences.version });
    return c.json(preferences, 200, { ETag: versionEtag(preferences.version) });
  });
}

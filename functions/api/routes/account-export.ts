// GET /v1/users/me/export: the caller's data as one JSON document, streamed
// (docs/account-export.md). The session check and the transaction happen
// before the first byte, so a bad token still gets its 401 envelope; after
// that the document flows straight from a database cursor to the socket, with
// backpressure. A failure mid-way cuts the stream: the document then lacks its
// last member `"complete": true`, and is not valid JSON either. So what can be
// known before, is: each synced collection's rule (exportRules) is taken first,
// and a collection without one answers 500 with its envelope.
import { createRoute } from "@hono/zod-openapi";
import { accountExportSchema } from "../../_shared/schemas/account-export.ts";
import { exportRules } from "../account/export-ownership.ts";
import { exportSlots } from "../account/export-slots.ts";
import { writeExport } from "../account/export-store.ts";
import type { App, Deps } from "../lib/app-env.ts";
import { loggedError, underlyingCause } from "../lib/error-log.ts";
import { type Admit, requireUser } from "../lib/middleware.ts";
import { AUTHENTICATED_ERRORS, bearerSecurity, errorResponses } from "../lib/openapi-helpers.ts";

/**
 * How long one export may take: its transaction's statement and
 * idle-in-transaction timeouts (withUser's timeLimitMs), since its cursor
 * statement stays active while a slow reader catches up.
 */
export const EXPORT_TIME_LIMIT_MS = 5 * 60_000;
/** Chunks queued towards the socket before the cursor waits for the reader. */
const QUEUED_CHUNKS = 8;

function exportRoute(deps: Deps, admit: Admit) {
  return createRoute({
  method: "get",
  path: "/v1/users/me/export",
  summary: "Download everything tidesync holds about the caller (additive to api-v1)",
  description: "One JSON document (Content-Disposition: attachment), streamed: account basics, user and app metadata, profile and onboarding, devices, " +
    "session metadata, sign-in identities, MFA factors (no secrets), the metadata of the caller's Storage objects, notification preferences and their history, " +
    "list memberships, invites created and used, recent sync results, " +
    "tester-group memberships and release feedback, the deletion state, and every synced row that is the caller's (docs/account-export.md defines it per table; rows other members " +
    "wrote in a shared list are theirs). Versioned by `export_version`; the last member is `complete: true`. Rate-limited " +
    "tightly (operation `account.export`). A server streams a few exports at once (TIDESYNC_CONCURRENT_EXPORTS); one more answers " +
    "429 RATE_LIMITED with Retry-After and spends none of the budget.",
  security: bearerSecurity,
  middleware: [requireUser(deps, "account.export", { admit })] as const,
  responses: {
    200: {
      description: "The export",
      headers: {
        "Content-Disposition": { description: "attachment; filename=\"tidesync-export-<date>.json\"", schema: { type: "string" as const } },
      },
      content: { "application/json": { schema: accountExportSchema.meta({ id: "AccountExport" }) } },
    },
    ...errorResponses(...AUTHENTICATED_ERRORS),
  },
  });
}

export function registerAccountExportRoutes(app: App, deps: Deps): void {
  // The export's slot, taken after the token check and before the budget is
  // spent, given back when its stream ends (or the request fails before).
  const slots = exportSlots(deps.config.db.maxConcurrentExports);
  const heldBy = new WeakMap<Request, () => void>();
  const admit: Admit = (c) => {
    const giveBack = slots.take();
    heldBy.set(c.req.raw, giveBack);
    return giveBack;
  };
  app.openapi(exportRoute(deps, admit), async (c) => {
    const giveBack = heldBy.get(c.req.raw)!;
    let rules: ReturnType<typeof exportRules>;
    try {
      rules = exportRules();
    } catch (error) {
      giveBack();
      throw error;
    }
    const user = c.get("user");
    const encoder = new TextEncoder();
    const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>(
      undefined,
      { highWaterMark: QUEUED_CHUNKS },
      { highWaterMark: QUEUED_CHUNKS },
    );
    const writer = writable.getWriter();
    let opened!: () => void;
    const open = new Promise<void>((resolve) => (opened = resolve));
    const finished = deps.db.withUser(user, async (tx) => {
      await writeExport(tx, { userId: user.sub, sessionId: user.session_id }, async (text) => {
        await writer.ready;
        await writer.write(encoder.encode(text));
      }, rules);
    }, { timeLimitMs: EXPORT_TIME_LIMIT_MS, onLive: opened, snapshot: true });
    finished.then(giveBack, giveBack);
    // Until the session check has passed, errors answer normally (401, 503).
    await Promise.race([open, finished]);
    const requestId = c.get("requestId");
    finished.then(
      () => writer.close(),
      (error) => {
        console.error(JSON.stringify({
          level: "error",
          time: new Date().toISOString(),
          msg: "export cut off",
          request_id: requestId,
          user_id: user.sub,
          error: loggedError(underlyingCause(error)),
        }));
        writer.abort(error).catch(() => {});
      },
    );
    const day = new Date().toISOString().slice(0, 10);
    // A stream, typed as the document it spells out (the OpenAPI schema describes it).
    return c.body(readable, 200, {
      "Content-Type": "application/json; charset=utf-8",
      "Content-Disposition": `attachment; filename="tidesync-export-${day}.json"`,
    }) as never;
  });
}

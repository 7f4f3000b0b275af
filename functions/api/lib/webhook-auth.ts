// Authentication of the release manager's requests (CI): a Standard Webhooks
// signature over the exact body bytes, checked before anything else reads the
// body. A bad, missing or stale signature is 401 and nothing is written.
import type { MiddlewareHandler } from "hono";
import { ApiError } from "../../_shared/errors.ts";
import { verifyWebhook, WEBHOOK_TOLERANCE_SECONDS, type WebhookVerdict } from "../../_shared/releases/webhook-signature.ts";
import type { AppEnv, Deps } from "./app-env.ts";
import { acceptJsonBody, readBodyBytes, requireJsonMediaType } from "./middleware.ts";

const REFUSALS: Record<Exclude<WebhookVerdict, { ok: true }>["reason"], string> = {
  missing_headers: "send webhook-id, webhook-timestamp and webhook-signature (Standard Webhooks)",
  bad_timestamp: "webhook-timestamp must be the Unix time in seconds",
  stale_timestamp: `webhook-timestamp is more than ${WEBHOOK_TOLERANCE_SECONDS} seconds from the server's clock; sign the request when sending it`,
  bad_signature: "webhook-signature does not match the body with the configured secret",
};

export function requireReleaseWebhook(deps: Deps): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const bytes = await readBodyBytes(c, deps.config.limits.max_body_bytes);
    const key = deps.config.releases.webhookKey;
    if (!key) throw new ApiError("UNAUTHENTICATED", "release publishing is not configured on this server (TIDESYNC_RELEASES_WEBHOOK_SECRET)");
    const verdict = await verifyWebhook(key, {
      id: c.req.header("webhook-id"),
      timestamp: c.req.header("webhook-timestamp"),
      signature: c.req.header("webhook-signature"),
    }, bytes, Math.floor(Date.now() / 1000));
    if (!verdict.ok) {
      c.get("logFields").webhook_refusal = verdict.reason;
      throw new ApiError("UNAUTHENTICATED", REFUSALS[verdict.reason]);
    }
    c.set("webhookId", verdict.id);
    c.get("logFields").webhook_id = verdict.id;
    // A read (GET, and HEAD, which Hono routes as GET) is signed over its empty body and has nothing to parse.
    if (c.req.method !== "GET" && c.req.method !== "HEAD") {
      requireJsonMediaType(c);
      acceptJsonBody(c, bytes);
    }
    await next();
  };
}

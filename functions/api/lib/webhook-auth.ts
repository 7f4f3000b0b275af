// Authentication of the release manager's requests (CI): a Standard Webhooks
// signature over the request it was made for — method, target (path and
// query) and the exact body bytes — checked before anything else reads the
// body, so a signature captured on one release or query is worth nothing on
// another; headers that cannot be CI's are refused before the body is read.
// A read's webhook-id is taken once, by the read that answers (a
// write's is recorded by its delivery): a read refused after the signature
// check (400, 404) or that failed (503) disclosed nothing and leaves it, so CI
// may send the same headers again. A bad, missing, stale or replayed signature
// is 401 and nothing is written or read.
import type { MiddlewareHandler } from "hono";
import { ApiError } from "../../_shared/errors.ts";
import { sha256, toHex } from "../../_shared/sha256.ts";
import {
  checkWebhookHeaders,
  requestPayload,
  verifyWebhook,
  WEBHOOK_TOLERANCE_SECONDS,
  type WebhookHeaders,
  type WebhookVerdict,
} from "../../_shared/releases/webhook-signature.ts";
import { claimWebhookRead, webhookReadTaken } from "../releases/release-store.ts";
import type { AppEnv, Deps } from "./app-env.ts";
import { BASE_PATH } from "./base-path.ts";
import { acceptJsonBody, readBodyBytes, readJsonBodyBytes } from "./middleware.ts";

type Refusal = Exclude<WebhookVerdict, { ok: true }>["reason"] | "replayed";

const REFUSALS: Record<Refusal, string> = {
  missing_headers: "send webhook-id, webhook-timestamp and webhook-signature (Standard Webhooks)",
  bad_timestamp: "webhook-timestamp must be the Unix time in seconds",
  stale_timestamp: `webhook-timestamp is more than ${WEBHOOK_TOLERANCE_SECONDS} seconds from the server's clock; sign the request when sending it`,
  bad_signature: "webhook-signature does not match this request (\"<METHOD> <path and query from /v1/>\\n<body>\", docs/test-builds.md) " +
    "with the configured secret",
  replayed: "this webhook-id was already used for a read that was answered: sign every read with a new webhook-id",
};

export interface ReleaseWebhookOptions {
  /**
   * Also take a signature over the body alone, as CI clients sign POST
   * /v1/releases since before the request was bound in (its target is fixed,
   * and its webhook-id makes a replay answer what it published).
   */
  bodyAlone?: boolean;
}

function refuse(c: Parameters<MiddlewareHandler<AppEnv>>[0], reason: Refusal): never {
  c.get("logFields").webhook_refusal = reason;
  throw new ApiError("UNAUTHENTICATED", REFUSALS[reason]);
}

export function requireReleaseWebhook(deps: Deps, options: ReleaseWebhookOptions = {}): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const key = deps.config.releases.webhookKey;
    if (!key) throw new ApiError("UNAUTHENTICATED", "release publishing is not configured on this server (TIDESYNC_RELEASES_WEBHOOK_SECRET)");
    const headers: WebhookHeaders = {
      id: c.req.header("webhook-id"),
      timestamp: c.req.header("webhook-timestamp"),
      signature: c.req.header("webhook-signature"),
    };
    // One clock reading, taken when the request came in, for both checks.
    const now = Math.floor(Date.now() / 1000);
    // What the headers decide on their own (missing, malformed, stale) is
    // refused before any of the body is read: these routes need no token, so
    // anyone can start a request on them, and only a request that may be CI's
    // is worth reading a body for.
    const sent = checkWebhookHeaders(headers, now);
    if (!sent.ok) refuse(c, sent.reason);
    // A read (GET, and HEAD: Hono answers it with the GET route's status and headers, without the
    // body) has no body to take as JSON; a write's is checked and read as every body route's.
    const read = c.req.method === "GET" || c.req.method === "HEAD";
    const bytes = read ? await readBodyBytes(c, deps.config) : await readJsonBodyBytes(c, deps.config);
    const url = new URL(c.req.url);
    const target = url.pathname.slice(BASE_PATH.length) + url.search;
    const payloads = [requestPayload(c.req.method, target, bytes), ...(options.bodyAlone ? [bytes] : [])];
    const verdict = await verifyWebhook(key, headers, payloads, now);
    if (!verdict.ok) refuse(c, verdict.reason);
    c.set("webhookId", verdict.id);
    c.get("logFields").webhook_id = verdict.id;
    // A read changes nothing that would record its id: the read that answers takes it.
    if (read) {
      // A spent id is refused before anything is read.
      if (await deps.db.asReleaseManager((tx) => webhookReadTaken(tx, verdict.id))) refuse(c, "replayed");
      await next();
      // Refused (4xx) or failed (5xx): nothing was disclosed, the id stays
      // unused. Answered: the id is taken before the answer leaves, and
      // only once (unique), so of the same headers sent at once only one
      // answer goes out; the others get this 401 instead of what they read.
      if (c.res.ok && !(await deps.db.asReleaseManager((tx) => claimWebhookRead(tx, verdict.id, verdict.timestamp)))) {
        refuse(c, "replayed");
      }
      return;
    }
    // A write's delivery is this request: the same webhook-id is a retry only with it.
    c.set("webhookRequestSha256", toHex(await sha256(payloads[0])));
    acceptJsonBody(c, bytes);
    await next();
  };
}

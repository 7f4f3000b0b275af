// Test-build distribution (docs/test-builds.md):
//   POST  /v1/releases                CI publishes a build (Standard Webhooks signature)
//   PATCH /v1/releases/{id}           CI pauses, rolls back or changes the rollout (same)
//   GET   /v1/releases/check          the app asks: is there a build for me, must I install it?
//   POST  /v1/releases/{id}/feedback  a tester's feedback on a build they may see
//   GET   /v1/releases/{id}/feedback  the release manager reads it (signed like CI's requests)
// A release of a channel the caller may not receive is exactly like no release.
import { createRoute } from "@hono/zod-openapi";
import { ApiError } from "../../_shared/errors.ts";
import { MAX_FEEDBACK_PER_USER_AND_RELEASE } from "../../_shared/release-limits.generated.ts";
import { planUpdateCheck } from "../../_shared/releases/plan-update-check.ts";
import { rolloutBucket } from "../../_shared/releases/rollout.ts";
import {
  changeReleaseSchema,
  feedbackRequestSchema,
  feedbackListQuerySchema,
  feedbackSchema,
  managedFeedbackListSchema,
  publishReleaseSchema,
  releaseIdParamsSchema,
  releaseSchema,
  updateCheckQuerySchema,
  type UpdateCheckResponse,
  updateCheckResponseSchema,
} from "../../_shared/schemas/releases.ts";
import type { Context } from "hono";
import type { App, AppEnv, Deps } from "../lib/app-env.ts";
import { jsonBody, requireUser } from "../lib/middleware.ts";
import { AUTHENTICATED_ERRORS, BODY_ERRORS, bearerSecurity, errorResponses } from "../lib/openapi-helpers.ts";
import { requireReleaseWebhook } from "../lib/webhook-auth.ts";
import { createArtifactStore } from "../releases/artifact-store.ts";
import { downloadLinks } from "../releases/download-links.ts";
import {
  changeRelease,
  insertFeedback,
  listFeedback,
  publishRelease,
  releaseExists,
  sessionDevice,
  visibleReleases,
  visibleUpdatePolicy,
  type WebhookDelivery,
} from "../releases/release-store.ts";
import { isUuid } from "../../_shared/uuid.ts";

/** Newest candidates an update check weighs (paused, rolled back or outside the rollout included). */
export const MAX_CHECK_CANDIDATES = 100;
const DEFAULT_FEEDBACK_PAGE = 100;

export const webhookSecurity = [{ standardWebhooks: [] }];
const WEBHOOK_ERRORS = ["UNAUTHENTICATED", ...BODY_ERRORS] as const;

function noSuchRelease(): ApiError {
  return new ApiError("NOT_FOUND", "no such release");
}

/** The database's refusals of a feedback insert, as the API answers them; anything else as it is. */
function feedbackRefused(error: unknown): unknown {
  const { code, constraint_name } = (error ?? {}) as { code?: unknown; constraint_name?: unknown };
  // The release an operator deleted after it was found: the insert waited for the delete, then
  // failed its foreign key. That is the release already gone (404), as for feedback sent a moment later.
  if (code === "23503" && constraint_name === "release_feedback_release_id_fkey") return noSuchRelease();
  // The release the caller saw, hidden from them before the insert (removed from the tester group,
  // its channel revoked): the insert policy's check reads a later snapshot. 404, as a moment later.
  if (code === "42501" && /row-level security policy/.test(String((error as { message?: unknown }).message))) return noSuchRelease();
  // The cap the table keeps (app_private.refuse_feedback_over_cap): 403, not 429, since waiting does not lift it.
  if (code === "23514" && constraint_name === "max_feedback_per_user_and_release") {
    const max = MAX_FEEDBACK_PER_USER_AND_RELEASE;
    return new ApiError("FORBIDDEN", `you have sent the most feedback one user may send on this release (${max})`, {
      details: [{ field: "/body", code: "feedback_limit_reached", message: `at most ${max} per user and release` }],
    });
  }
  return error;
}

/** Another request under a webhook-id a delivery already used: nothing is written. */
function webhookIdReused(): ApiError {
  const message = "was already used for another request: a webhook-id names one delivery, reuse it only to retry that very request";
  return new ApiError("VALIDATION_FAILED", `webhook-id ${message}`, {
    details: [{ field: "/headers/webhook-id", code: "webhook_id_reused", message }],
  });
}

/** The verified delivery of a CI write (requireReleaseWebhook set both). */
function webhookDelivery(c: Context<AppEnv>): WebhookDelivery {
  return { id: c.get("webhookId")!, requestSha256: c.get("webhookRequestSha256")! };
}

export function registerReleasesRoutes(app: App, deps: Deps): void {
  const store = createArtifactStore(deps.config.releases);
  const releaseContent = { "application/json": { schema: releaseSchema.meta({ id: "Release" }) } };

  const publish = createRoute({
    method: "post",
    path: "/v1/releases",
    summary: "Publish a build (CI)",
    description: "Signed with Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature; secret " +
      "TIDESYNC_RELEASES_WEBHOOK_SECRET) over \"POST /v1/releases\\n<body>\", or over the body alone as CI clients signed it " +
      "before requests were bound in. A retried delivery (same webhook-id, same request) answers 200 with the release it made " +
      "and writes nothing; another request with a webhook-id already used is 400 (webhook_id_reused). A build number already published on this (platform, channel) — for kind ota, on this (platform, channel, " +
      "runtime_version) — is 400 (already_published). An update_policy replaces the channel's only from a build number at " +
      "least that of the build that set it (a lower build is published and leaves the policy). See docs/test-builds.md.",
    security: webhookSecurity,
    middleware: [requireReleaseWebhook(deps, { bodyAlone: true })] as const,
    request: { body: { required: true, content: { "application/json": { schema: publishReleaseSchema.meta({ id: "PublishRelease" }) } } } },
    responses: {
      201: { description: "Published", content: releaseContent },
      200: { description: "A retried delivery: the release this webhook-id published", content: releaseContent },
      ...errorResponses(...WEBHOOK_ERRORS),
    },
  });

  const change = createRoute({
    method: "patch",
    path: "/v1/releases/{id}",
    summary: "Pause, roll back or change the rollout of a build (CI)",
    description: "Signed over \"PATCH /v1/releases/{id}\\n<body>\" (Standard Webhooks, as POST /v1/releases): good for this " +
      "release only. Only status and rollout_percentage change; a published build's metadata (its artifact's path or URL, " +
      "sha256 and size included) never does, the bytes at that path are the bucket's. A retried " +
      "delivery (same webhook-id, same request) changes nothing again; another request with a webhook-id already used " +
      "is 400 (webhook_id_reused).",
    security: webhookSecurity,
    middleware: [requireReleaseWebhook(deps)] as const,
    request: {
      params: releaseIdParamsSchema,
      body: { required: true, content: { "application/json": { schema: changeReleaseSchema.meta({ id: "ChangeRelease" }) } } },
    },
    responses: {
      200: { description: "Changed (or a retried delivery)", content: releaseContent },
      ...errorResponses(...WEBHOOK_ERRORS, "NOT_FOUND"),
    },
  });

  const check = createRoute({
    method: "get",
    path: "/v1/releases/check",
    summary: "Is there a newer build for me?",
    description: "The newest active build of the platform and channel above build_number that the caller may receive and " +
      "whose rollout includes the calling device (update), with a download link that expires. level is required when " +
      "build_number is below the channel's minimum supported build (min_supported_build) and the build offered meets it (one " +
      "offered below it, the one that meets it not yet rolled out to the device, is optional). A " +
      "channel the caller may not receive answers exactly like one without builds or policy: update null, level none, " +
      "min_supported_build null. release is update under its former name (deprecated).",
    security: bearerSecurity,
    middleware: [requireUser(deps, "releases")] as const,
    request: { query: updateCheckQuerySchema },
    responses: {
      200: { description: "The answer", content: { "application/json": { schema: updateCheckResponseSchema.meta({ id: "UpdateCheck" }) } } },
      ...errorResponses(...AUTHENTICATED_ERRORS, "VALIDATION_FAILED"),
    },
  });

  const feedback = createRoute({
    method: "post",
    path: "/v1/releases/{id}/feedback",
    summary: "Send feedback on a build",
    description: "A tester's text about a release they may see, stored with their device's platform and build (from the " +
      "calling session's device unless given). Read by whoever manages releases. An unknown release, or one the caller may " +
      `not see, is 404. A user sends at most ${MAX_FEEDBACK_PER_USER_AND_RELEASE} feedback on one release (the database's cap, ` +
      "GET /v1/meta releases.max_feedback_per_user_and_release): past it 403 FORBIDDEN (detail feedback_limit_reached), nothing stored.",
    security: bearerSecurity,
    middleware: [requireUser(deps, "releases"), jsonBody(deps)] as const,
    request: {
      params: releaseIdParamsSchema,
      body: { required: true, content: { "application/json": { schema: feedbackRequestSchema.meta({ id: "FeedbackRequest" }) } } },
    },
    responses: {
      201: { description: "Stored", content: { "application/json": { schema: feedbackSchema.meta({ id: "Feedback" }) } } },
      ...errorResponses(...AUTHENTICATED_ERRORS, ...BODY_ERRORS, "NOT_FOUND"),
    },
  });

  const readFeedback = createRoute({
    method: "get",
    path: "/v1/releases/{id}/feedback",
    summary: "Read the feedback on a build (release manager)",
    description: "Signed over \"GET /v1/releases/{id}/feedback?<query>\\n\" (Standard Webhooks, as POST /v1/releases; the " +
      "query exactly as sent), with a new webhook-id for each read: a signature is good for this release and query, and the " +
      "read that answers spends its webhook-id (a read refused with 400 or 404, or failed with 503, leaves it: the same " +
      "headers may be sent again). HEAD answers the same without the body, signed over \"HEAD …\". " +
      "Every tester's feedback on the release, newest first (by created_at, then id), with who sent it, in keyset pages: " +
      "pass next_before as before for the next page (null: the last). An unknown release is 404.",
    security: webhookSecurity,
    middleware: [requireReleaseWebhook(deps)] as const,
    request: { params: releaseIdParamsSchema, query: feedbackListQuerySchema },
    responses: {
      200: { description: "Newest first", content: { "application/json": { schema: managedFeedbackListSchema.meta({ id: "ManagedFeedbackList" }) } } },
      ...errorResponses("UNAUTHENTICATED", "VALIDATION_FAILED", "NOT_FOUND"),
    },
  });

  app.openapi(readFeedback, async (c) => {
    const { id } = c.req.valid("param");
    const { limit, before } = c.req.valid("query");
    if (!isUuid(id)) throw noSuchRelease();
    const page = await deps.db.asReleaseManager((tx) => listFeedback(tx, id, { limit: limit ?? DEFAULT_FEEDBACK_PAGE, before }));
    if (!page) throw noSuchRelease();
    Object.assign(c.get("logFields"), { release_id: id, feedback: page.feedback.length });
    return c.json(page, 200);
  });

  app.openapi(publish, async (c) => {
    const release = c.req.valid("json");
    const outcome = await deps.db.asReleaseManager((tx) => publishRelease(tx, webhookDelivery(c), release));
    if (outcome.kind === "webhook_id_reused") throw webhookIdReused();
    if (outcome.kind === "conflict") {
      const where = release.kind === "ota" ? "platform, channel and runtime version" : "platform and channel";
      throw new ApiError("VALIDATION_FAILED", `this build number is already published on this ${where}`, {
        details: [{ field: "/build_number", code: "already_published", message: "publish a higher build number" }],
      });
    }
    Object.assign(c.get("logFields"), { release_id: outcome.release.id, replayed: outcome.kind === "replayed" });
    if (outcome.kind === "created" && outcome.updatePolicy) c.get("logFields").update_policy = outcome.updatePolicy;
    return outcome.kind === "created" ? c.json(outcome.release, 201) : c.json(outcome.release, 200);
  });

  app.openapi(change, async (c) => {
    const { id } = c.req.valid("param");
    if (!isUuid(id)) throw noSuchRelease();
    const outcome = await deps.db.asReleaseManager((tx) => changeRelease(tx, webhookDelivery(c), id.toLowerCase(), c.req.valid("json")));
    if (!outcome) throw noSuchRelease();
    if (outcome.kind === "webhook_id_reused") throw webhookIdReused();
    Object.assign(c.get("logFields"), { release_id: outcome.release.id, replayed: outcome.kind === "replayed" });
    return c.json(outcome.release, 200);
  });

  app.openapi(check, async (c) => {
    const user = c.get("user");
    const query = c.req.valid("query");
    const seen = await deps.db.withUser(user, async (tx) => ({
      device: await sessionDevice(tx, user.session_id),
      releases: await visibleReleases(tx, { platform: query.platform, channel: query.channel, kind: "binary", aboveBuild: query.build_number }, MAX_CHECK_CANDIDATES),
      policyAndTime: await visibleUpdatePolicy(tx, query.platform, query.channel),
    }));
    // Rollouts are per device; a session that registered none rolls out as its user.
    const rolloutKey = seen.device?.installation_id ?? user.sub;
    const candidates = await Promise.all(seen.releases.map(async (r) => ({ ...r, rollout_bucket: await rolloutBucket(r.id, rolloutKey) })));
    const { policy, serverTime } = seen.policyAndTime;
    const plan = planUpdateCheck(candidates, query.build_number, policy);
    Object.assign(c.get("logFields"), { update_level: plan.level, release_id: plan.release?.id });
    const r = plan.release;
    let update: UpdateCheckResponse["update"] = null;
    if (r) {
      const ttl = deps.config.releases.linkTtlSeconds;
      const [link] = await downloadLinks(store, ttl, [{ path: r.artifact_path, url: r.artifact_url }]);
      update = {
        id: r.id,
        version: r.version,
        build_number: r.build_number,
        release_notes: r.release_notes,
        created_at: r.created_at.toISOString(),
        download: { url: link.url, expires_at: link.expiresAt?.toISOString() ?? null, sha256: r.artifact_sha256, size: Number(r.artifact_size) },
      };
    }
    // `release` is `update` under its former name (deprecated; updateCheckResponseSchema).
    const answer: UpdateCheckResponse = {
      update,
      level: plan.level,
      min_supported_build: policy?.minimum_build_number ?? null,
      server_time: serverTime,
      release: update,
    };
    return c.json(answer, 200);
  });

  app.openapi(feedback, async (c) => {
    const user = c.get("user");
    const { id } = c.req.valid("param");
    const body = c.req.valid("json");
    if (!isUuid(id)) throw noSuchRelease();
    const stored = await deps.db.withUser(user, async (tx) => {
      if (!(await releaseExists(tx, id))) return null;
      const device = await sessionDevice(tx, user.session_id);
      const platform = body.platform ?? device?.platform;
      const buildNumber = body.build_number ?? device?.build_number;
      if (platform === undefined || buildNumber === undefined) {
        throw new ApiError("VALIDATION_FAILED", "this session registered no device: give platform and build_number", {
          details: [
            ...(platform === undefined ? [{ field: "/platform", code: "required", message: "is required without a registered device" }] : []),
            ...(buildNumber === undefined ? [{ field: "/build_number", code: "required", message: "is required without a registered device" }] : []),
          ],
        });
      }
      return await insertFeedback(tx, { releaseId: id.toLowerCase(), userId: user.sub, deviceId: device?.id ?? null, platform, buildNumber, body: body.body });
    }).catch((error) => {
      throw feedbackRefused(error);
    });
    if (!stored) throw noSuchRelease();
    Object.assign(c.get("logFields"), { release_id: stored.release_id, feedback_id: stored.id });
    return c.json(stored, 201);
  });
}

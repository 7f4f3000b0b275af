// GET /v1/meta: public facts a client needs before it signs in.
//
// Its server_time is the database's clock, as every server_time is
// (docs/errors.md, "server_time"): one trivial statement, the only database work
// of the route. So meta is not among the routes that answer without the
// database: it waits for an admission slot like them, and while the database
// is down or frozen it answers 503 UNAVAILABLE (retryable, Retry-After), never
// a time from another clock. GET /v1/openapi.json is what still answers then.
import { createRoute } from "@hono/zod-openapi";
import { metaResponseSchema } from "../../_shared/schemas/meta.ts";
import { collectionNames, collectionSchemas } from "../../_shared/collections.ts";
import { MAX_FEEDBACK_PER_USER_AND_RELEASE } from "../../_shared/release-limits.generated.ts";
import { WEBHOOK_TOLERANCE_SECONDS } from "../../_shared/releases/webhook-signature.ts";
import { EXPO_SIGNATURE_ALGORITHM } from "../releases/expo-response.ts";
import { EXPO_MANIFEST_PATH } from "./expo-updates.ts";
import type { App, Deps } from "../lib/app-env.ts";
import { unavailable } from "../lib/db.ts";
import { errorResponses } from "../lib/openapi-helpers.ts";
import { wireNow } from "../sync/wire-time.ts";

const getMeta = createRoute({
  method: "get",
  path: "/v1/meta",
  summary: "API version, server time, limits, sync collections, rate limits, deprecations and test-build settings (no auth)",
  description: "server_time is the database's clock, as in every answer (one trivial statement): while the database is " +
    "unavailable this route answers 503 UNAVAILABLE too. GET /v1/openapi.json needs no database.",
  responses: {
    200: { description: "Facts about this deployment", content: { "application/json": { schema: metaResponseSchema.meta({ id: "Meta" }) } } },
    ...errorResponses(),
  },
});

export function registerMetaRoutes(app: App, deps: Deps): void {
  app.openapi(getMeta, async (c) => {
    const [row] = await deps.db.query((sql) => sql<{ server_time: string }[]>`select ${wireNow(sql)} as server_time`);
    // A connection terminated under the statement can end it without a row: the database is unavailable.
    if (!row) throw unavailable(new Error("the database's clock answered no row"));
    return c.json({
      api_version: "1" as const,
      server_time: row.server_time,
      limits: deps.config.limits,
      collections: collectionNames(),
      collection_schemas: collectionSchemas(),
      rate_limits: deps.config.rateLimits,
      deprecations: deps.config.deprecations,
      releases: {
        download_link_ttl_seconds: deps.config.releases.linkTtlSeconds,
        webhook_tolerance_seconds: WEBHOOK_TOLERANCE_SECONDS,
        expo_updates_url_path: EXPO_MANIFEST_PATH,
        expo_code_signing: deps.config.releases.expoSigning
          ? { keyid: deps.config.releases.expoSigning.keyId, alg: EXPO_SIGNATURE_ALGORITHM }
          : null,
        max_feedback_per_user_and_release: MAX_FEEDBACK_PER_USER_AND_RELEASE,
      },
    }, 200);
  });
}

// GET /v1/meta: public facts a client needs before it signs in.
import { createRoute } from "@hono/zod-openapi";
import { metaResponseSchema } from "../../_shared/schemas/meta.ts";
import { collectionNames, collectionSchemas } from "../../_shared/collections.ts";
import { WEBHOOK_TOLERANCE_SECONDS } from "../../_shared/releases/webhook-signature.ts";
import { EXPO_SIGNATURE_ALGORITHM } from "../releases/expo-response.ts";
import { EXPO_MANIFEST_PATH } from "./expo-updates.ts";
import type { App, Deps } from "../lib/app-env.ts";
import { errorResponses } from "../lib/openapi-helpers.ts";

const getMeta = createRoute({
  method: "get",
  path: "/v1/meta",
  summary: "API version, server time, limits, sync collections, rate limits, deprecations and test-build settings (no auth)",
  responses: {
    200: { description: "Facts about this deployment", content: { "application/json": { schema: metaResponseSchema.meta({ id: "Meta" }) } } },
    ...errorResponses(),
  },
});

export function registerMetaRoutes(app: App, deps: Deps): void {
  app.openapi(getMeta, (c) =>
    c.json({
      api_version: "1" as const,
      server_time: new Date().toISOString(),
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
      },
    }, 200));
}

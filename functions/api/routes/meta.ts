// GET /v1/meta: public facts a client needs before it signs in.
import { createRoute } from "@hono/zod-openapi";
import { metaResponseSchema } from "../../_shared/schemas/meta.ts";
import { collectionNames, collectionSchemas } from "../../_shared/collections.ts";
import type { App, Deps } from "../lib/app-env.ts";
import { errorResponses } from "../lib/openapi-helpers.ts";

const getMeta = createRoute({
  method: "get",
  path: "/v1/meta",
  summary: "API version, server time, limits, sync collections and deprecations (no auth)",
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
    }, 200));
}

// Deprecated routes, declared in ONE place: DEPRECATIONS below (the
// deployment's own list, empty today), plus TIDESYNC_DEPRECATIONS for a test
// or staging configuration. From this list come the response headers of a
// deprecated route (Deprecation per RFC 9745, Sunset per RFC 8594,
// Link rel="deprecation"), `deprecations` in GET /v1/meta and
// `deprecated: true` in the OpenAPI document. Policy: docs/versioning.md.
import type { MiddlewareHandler } from "hono";
import { z } from "zod";
import { type Deprecation, deprecationSchema } from "../../_shared/schemas/deprecation.ts";
import type { App, AppEnv } from "./app-env.ts";

/** The routes this release deprecates; add a row (and a migration guide) to deprecate one. */
export const DEPRECATIONS: Deprecation[] = [];

export function loadDeprecations(raw: string | undefined): Deprecation[] {
  if (!raw) return DEPRECATIONS;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new Error("TIDESYNC_DEPRECATIONS must be a JSON array of {route, since, sunset, link}");
  }
  const result = z.array(deprecationSchema).safeParse(parsed);
  if (!result.success) {
    throw new Error(`TIDESYNC_DEPRECATIONS is invalid: ${result.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`);
  }
  return [...DEPRECATIONS, ...result.data];
}

/** Hono's `/api/v1/devices/:id` → the OpenAPI spelling `/v1/devices/{id}`. */
function openApiPath(routePath: string, basePath: string): string {
  return routePath.slice(basePath.length).replace(/:([A-Za-z_]+)/g, "{$1}");
}

/** The headers of a deprecated route's every response. */
export function deprecationHeaders(deprecation: Deprecation): Record<string, string> {
  return {
    // RFC 9745: a Structured Field Date, seconds since the epoch.
    "Deprecation": `@${Math.floor(Date.parse(deprecation.since) / 1000)}`,
    // RFC 8594: an HTTP-date.
    "Sunset": new Date(deprecation.sunset).toUTCString(),
    "Link": `<${deprecation.link}>; rel="deprecation"`,
  };
}

/** Adds the deprecation headers to the responses of the routes in `deprecations`. */
export function deprecationMiddleware(deprecations: Deprecation[], basePath: string): MiddlewareHandler<AppEnv> {
  const byRoute = new Map(deprecations.map((d) => [d.route, deprecationHeaders(d)]));
  return async (c, next) => {
    await next();
    const headers = byRoute.get(`${c.req.method} ${openApiPath(c.req.routePath, basePath)}`);
    if (headers) for (const [name, value] of Object.entries(headers)) c.res.headers.set(name, value);
  };
}

/** Marks the deprecated operations `deprecated: true`; a row naming no route stops the start. */
export function markDeprecatedOperations(app: App, deprecations: Deprecation[]): void {
  for (const deprecation of deprecations) {
    const [method, path] = deprecation.route.split(" ");
    const definition = app.openAPIRegistry.definitions.find((d) =>
      d.type === "route" && d.route.method.toUpperCase() === method && d.route.path === path
    );
    if (!definition || definition.type !== "route") throw new Error(`deprecated route ${deprecation.route} does not exist`);
    definition.route.deprecated = true;
  }
}

// Builds the `api` function: a Hono router under /api (the function's name, as
// the edge runtime passes it) with every operation under /v1/.
import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import { cors } from "hono/cors";
import type { ValidationTargets } from "hono";
import { HTTPException } from "hono/http-exception";
import { isCursorNotIssued } from "../_shared/cursor-length.ts";
import { ApiError, errorEnvelope } from "../_shared/errors.ts";
import { boundedDetails, issueCount, MAX_FIELD_DETAILS, validationMessage, zodIssuesToDetails } from "../_shared/validation-details.ts";
import type { App, AppEnv, Deps } from "./lib/app-env.ts";
import { BASE_PATH } from "./lib/base-path.ts";
import { type Config } from "./lib/config.ts";
import { createDb, isDatabaseUnavailable, isLoginRefused, unavailable } from "./lib/db.ts";
import { deprecationMiddleware, markDeprecatedOperations } from "./lib/deprecations.ts";
import { loggedError, underlyingCause } from "./lib/error-log.ts";
import { concurrencyLimit } from "./lib/concurrency-limit.ts";
import { declaredBodyLimit, headerSizeLimit, requestContext } from "./lib/middleware.ts";
import { errorResponses, openApiDocument } from "./lib/openapi-helpers.ts";
import { validateRequests } from "./lib/route-validation.ts";
import { createTokenVerifier } from "./lib/verify-token.ts";
import { invalidCursor } from "./sync/cursor.ts";
import { registerRoutes } from "./routes/index.ts";

export const OPENAPI_INFO = {
  openapi: "3.1.0",
  info: {
    title: "tidesync API",
    version: "1",
    description: "The trusted backend of offline-first mobile apps: device sessions, sync, notification preferences, test-build distribution. " +
      "Every non-2xx response is the error envelope; see docs/errors.md.",
  },
  servers: [{ url: "{supabase_url}/functions/v1", variables: { supabase_url: { default: "http://127.0.0.1:54321" } } }],
};

const openApiDocumentRoute = createRoute({
  method: "get",
  path: "/v1/openapi.json",
  summary: "This OpenAPI 3.1 document",
  responses: {
    200: { description: "The document", content: { "application/json": { schema: z.looseObject({}) } } },
    ...errorResponses(),
  },
});

/**
 * Where a detail's pointer starts, per validation target (docs/errors.md): a body field's and a
 * query parameter's at the root (`/ops/3/data/title`, `/limit`), a header's under `/headers/`
 * (`/headers/expo-platform`), as the routes' own header refusals name theirs. A path parameter is
 * any string (an id that names nothing is 404), so none fails; no route reads a form or a cookie.
 */
const POINTER_BASES: Record<keyof ValidationTargets, readonly string[]> = {
  json: [],
  form: [],
  query: [],
  param: [],
  header: ["headers"],
  cookie: [],
};

/**
 * A library's refusal (Hono's HTTPException): none is reachable now (validateRequests gives the
 * router no body, so no JSON validator or media-type gate of Hono's runs), but should one come, a
 * 4xx answers 400 VALIDATION_FAILED: never a retryable 500, which a client following
 * docs/errors.md would send again forever. A 5xx stays unexpected (INTERNAL, logged).
 */
function libraryRefusal(error: HTTPException): ApiError | undefined {
  if (error.status < 400 || error.status >= 500) return undefined;
  return new ApiError("VALIDATION_FAILED", `the request was refused as sent (HTTP ${error.status})`);
}

export function toApiError(error: unknown): ApiError | undefined {
  if (error instanceof ApiError) return error;
  if (isDatabaseUnavailable(error)) return unavailable(error);
  if (error instanceof HTTPException) return libraryRefusal(error);
  return undefined;
}

// Route patterns, for telling "wrong method" (405) from "no such route" (404).
// They are matched against c.req.path, the path the router saw: with
// `strict: false` Hono has already taken one trailing slash off it, so the
// patterns end where the route does (an optional slash more here would make
// `/v1/meta//` a 405 on a path that no method is routed on).
function routeMatchers(app: App): { method: string; regex: RegExp }[] {
  return app.routes
    .filter((r) => r.method !== "ALL")
    .map((r) => ({
      method: r.method,
      regex: new RegExp("^" + r.path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/\\?:[A-Za-z_]+/g, "[^/]+") + "$"),
    }));
}

export function createApp(config: Config, overrides: Partial<Deps> = {}): {
  app: App;
  deps: Deps;
  /**
   * The methods a request for `url` may use (a 405's Allow; none: no such route), the path read
   * as the router reads it: for a gateway that cannot hand a request over (a method the Fetch
   * standard forbids in a Request, or one it would spell otherwise).
   */
  allowedMethodsAt: (url: string) => string[];
} {
  const deps: Deps = {
    config,
    db: overrides.db ?? createDb(config),
    verifyToken: overrides.verifyToken ?? createTokenVerifier(config.auth),
  };

  const app: App = new OpenAPIHono<AppEnv>({
    defaultHook: (result) => {
      if (!result.success) {
        // A pull cursor longer than any this server issues is 400 INVALID_CURSOR, as the cursor's
        // decoder answers any other it did not issue (a client drops its cursor on that, and would
        // send a VALIDATION_FAILED's again), here before the budget is spent; beside another
        // refused field, that field's 400 alone, as with a short cursor it did not issue.
        const issues = result.error.issues.filter((issue) => !isCursorNotIssued(issue));
        if (issues.length === 0) throw invalidCursor();
        // @hono/zod-validator passes the value it parsed (the body, query, path or headers) as
        // `data`, failed or not (its Hook type says so; @hono/zod-openapi's narrower one does not).
        const { data } = result as { data?: unknown };
        const details = boundedDetails(zodIssuesToDetails(issues, data, POINTER_BASES[result.target], MAX_FIELD_DETAILS));
        throw new ApiError("VALIDATION_FAILED", validationMessage(issueCount(issues)), { details });
      }
    },
    // One rule for trailing slashes on every route: `/v1/whoami/` is `/v1/whoami`.
    strict: false,
  }).basePath(BASE_PATH);

  app.use("*", requestContext());
  // CORS before every refusal, so that a browser app can read each one (a 431's too).
  app.use(
    "*",
    cors({
      origin: "*",
      allowHeaders: ["authorization", "x-client-info", "apikey", "content-type", "if-match", "x-request-id"],
      allowMethods: ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"],
      exposeHeaders: [
        "ETag", "X-Request-Id", "Retry-After", "RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset", "RateLimit-Policy",
        "Deprecation", "Sunset", "Link",
      ],
      maxAge: 600,
    }),
  );
  app.use("*", headerSizeLimit());
  app.use("*", declaredBodyLimit(deps));
  app.use("*", deprecationMiddleware(config.deprecations, BASE_PATH));

  app.openAPIRegistry.registerComponent("securitySchemes", "bearerAuth", {
    type: "http",
    scheme: "bearer",
    bearerFormat: "JWT",
    description: "A Supabase Auth access token (supabase.auth.getSession()).",
  });
  app.openAPIRegistry.registerComponent("securitySchemes", "standardWebhooks", {
    type: "apiKey",
    in: "header",
    name: "webhook-signature",
    description: "Standard Webhooks (standardwebhooks.com): webhook-id, webhook-timestamp and webhook-signature " +
      "(v1,<base64 HMAC-SHA256 of id.timestamp.payload>) with the secret TIDESYNC_RELEASES_WEBHOOK_SECRET, where the payload " +
      "is the request: \"<METHOD> <path from /v1/ with its query>\\n<body>\" (POST /v1/releases also takes the body alone). " +
      "For CI; see docs/test-builds.md.",
  });

  // Hono runs handlers in the order they were registered: a request for the
  // OpenAPI document is answered before it reaches the admission limit, so it
  // does not wait behind requests that wait for the database (an outage
  // holds every slot until the statement timeout). Every other route, GET
  // /v1/meta included (its server_time is the database's clock), is behind it.
  validateRequests(app);
  app.openapi(openApiDocumentRoute, (c) => c.json({ ...openApiDocument(app, OPENAPI_INFO) }, 200));
  app.use("*", concurrencyLimit(config.db.maxConcurrentRequests));
  registerRoutes(app, deps);
  markDeprecatedOperations(app, config.deprecations);

  const matchers = routeMatchers(app);
  const allowedMethods = (path: string) => [...new Set(matchers.filter((m) => m.regex.test(path)).map((m) => m.method))];

  app.notFound((c) => {
    const allowed = allowedMethods(c.req.path);
    const requestId = c.get("requestId") ?? crypto.randomUUID();
    const error = allowed.length > 0
      ? new ApiError("METHOD_NOT_ALLOWED", `${c.req.method} is not allowed here; use ${allowed.join(", ")}`)
      : new ApiError("NOT_FOUND", "no such route");
    c.get("logFields") && (c.get("logFields").error_code = error.code);
    return allowed.length > 0
      ? c.json(errorEnvelope(error, requestId), 405, { Allow: allowed.join(", ") })
      : c.json(errorEnvelope(error, requestId), 404);
  });

  app.onError((error, c) => {
    const requestId = c.get("requestId") ?? crypto.randomUUID();
    const known = toApiError(error);
    const apiError = known ?? new ApiError("INTERNAL", "an unexpected error occurred; it was logged with this request id");
    if (!known || apiError.code === "UNAVAILABLE") {
      // Never swallowed: the cause goes to the log (never to the client).
      // An UNAVAILABLE of our own (a batch planned twice on a stale picture) has no cause but itself.
      const cause = underlyingCause(known ?? error);
      console.error(JSON.stringify({
        level: "error",
        time: new Date().toISOString(),
        msg: !known ? "unhandled error" : isLoginRefused(cause) ? "the database refused the function's login: check SUPABASE_DB_URL" : "dependency unavailable",
        request_id: requestId,
        route: c.req.routePath,
        error: loggedError(cause),
      }));
    }
    c.get("logFields") && (c.get("logFields").error_code = apiError.code);
    // A method a route refuses itself (HEAD where a token is needed, middleware.ts) names what the path allows.
    const headers = apiError.code === "METHOD_NOT_ALLOWED" && !apiError.headers.Allow
      ? { ...apiError.headers, Allow: allowedMethods(c.req.path).join(", ") }
      : apiError.headers;
    return c.json(errorEnvelope(apiError, requestId), apiError.status as 400, headers);
  });

  return { app, deps, allowedMethodsAt: (url) => allowedMethods(app.getPath(new Request(url))) };
}

// Shared pieces of route definitions so every route documents the same error
// envelope and headers, generated from the same zod schemas that validate.
import { z } from "@hono/zod-openapi";
import { ERROR_CODES, type ErrorCode, errorEnvelopeSchema } from "../../_shared/errors.ts";
import type { App } from "./app-env.ts";

// Components are named with zod's native .meta({ id }): .openapi() needs a patched zod
// prototype, which Node (a second zod instance) does not share.
export const ErrorEnvelope = errorEnvelopeSchema.meta({ id: "ErrorEnvelope" });

const DESCRIPTIONS: Record<number, string> = {
  400: "MALFORMED_JSON, VALIDATION_FAILED or INVALID_CURSOR",
  401: "UNAUTHENTICATED: token missing, invalid, expired, or its session was revoked",
  403: "FORBIDDEN: the token is not a signed-in user's",
  404: "NOT_FOUND: no such object (also for other users' objects)",
  405: "METHOD_NOT_ALLOWED: a method the path does not take, or HEAD on a route a token opens (docs/errors.md#head); Allow lists the path's methods",
  408: "REQUEST_TIMEOUT: the body did not arrive within the server's deadline; retryable",
  410: "RESYNC_REQUIRED: pull from scratch",
  412: "PRECONDITION_FAILED: If-Match is stale",
  413: "PAYLOAD_TOO_LARGE: the body, or its declared Content-Length (checked before routing, on every route), is over limits.max_body_bytes",
  415: "UNSUPPORTED_MEDIA_TYPE: send the body as application/json (charset=utf-8 allowed), uncompressed (no Content-Encoding but identity)",
  431: "HEADERS_TOO_LARGE: the request headers exceed the limit",
  429: "RATE_LIMITED: retry after Retry-After seconds",
  500: "INTERNAL: unexpected; retryable",
  503: "UNAVAILABLE: a dependency timed out; retry after Retry-After seconds",
};

/**
 * Error responses for a route: the statuses of the given codes plus those every
 * route can give (a declared Content-Length is checked, and a method refused,
 * before the route is known).
 */
export function errorResponses(...codes: ErrorCode[]) {
  const statuses = new Set<number>([405, 413, 431, 500, 503, ...codes.map((code) => ERROR_CODES[code].status)]);
  const responses: Record<number, { description: string; content: { "application/json": { schema: typeof ErrorEnvelope } } }> = {};
  for (const status of [...statuses].sort()) {
    responses[status] = { description: DESCRIPTIONS[status], content: { "application/json": { schema: ErrorEnvelope } } };
  }
  return responses;
}

/** The errors of an authenticated route, before its own. */
export const AUTHENTICATED_ERRORS: ErrorCode[] = ["UNAUTHENTICATED", "FORBIDDEN", "RATE_LIMITED"];
/** The errors of a route that takes a JSON body. */
export const BODY_ERRORS: ErrorCode[] = ["MALFORMED_JSON", "VALIDATION_FAILED", "REQUEST_TIMEOUT", "PAYLOAD_TOO_LARGE", "UNSUPPORTED_MEDIA_TYPE"];

export const bearerSecurity = [{ bearerAuth: [] }];

type HeaderObject = { description: string; schema: { type: "string" | "integer" } };

/** The headers the middleware sets (lib/middleware.ts, lib/rate-limit.ts, app.ts), as the document names them. */
const RESPONSE_HEADERS: Record<string, HeaderObject> = {
  "X-Request-Id": { description: "the caller's X-Request-Id when sane (8-128 of A-Z a-z 0-9 . _ : -), else a new id; equals error.request_id", schema: { type: "string" } },
  "Cache-Control": { description: "no-store", schema: { type: "string" } },
  "Retry-After": { description: "seconds to wait before retrying", schema: { type: "integer" } },
  "Allow": { description: "the methods the path takes", schema: { type: "string" } },
  "Accept-Encoding": { description: "identity, on a 415 for a request Content-Encoding: bodies are taken uncompressed", schema: { type: "string" } },
  "RateLimit-Limit": { description: "requests allowed per window for this operation", schema: { type: "integer" } },
  "RateLimit-Remaining": { description: "requests left in the window", schema: { type: "integer" } },
  "RateLimit-Reset": { description: "seconds until the window resets", schema: { type: "integer" } },
  "RateLimit-Policy": { description: "<limit>;w=<window seconds>; where the session's budget has a ceiling on the user's total, both: <limit>;w=<window>, <user_limit>;w=<window>", schema: { type: "string" } },
};
const RATE_LIMIT_HEADERS = ["RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset", "RateLimit-Policy"];

function headersOf(status: number, rateLimited: boolean): string[] {
  const names = ["X-Request-Id", "Cache-Control"];
  if (status === 429 || status === 503) names.push("Retry-After");
  if (status === 405) names.push("Allow");
  if (status === 415) names.push("Accept-Encoding");
  // Sent once the caller's rate limit is counted: on its answers, and on the 429 itself.
  if (rateLimited && ((status >= 200 && status < 300) || status === 429)) names.push(...RATE_LIMIT_HEADERS);
  return names;
}

type OpenApiDocument = ReturnType<App["getOpenAPI31Document"]>;
type Operation = { security?: Record<string, unknown>[]; responses?: Record<string, { headers?: Record<string, unknown> }> };

/**
 * The app's OpenAPI 3.1 document (served at GET /v1/openapi.json, written to
 * docs/openapi.json), with the headers every response carries declared on
 * each response, by reference to components.headers.
 */
export function openApiDocument(app: App, info: Parameters<App["getOpenAPI31Document"]>[0]): OpenApiDocument {
  const document = app.getOpenAPI31Document(info);
  document.components = { ...document.components, headers: { ...document.components?.headers, ...RESPONSE_HEADERS } };
  for (const item of Object.values(document.paths ?? {})) {
    for (const operation of Object.values(item as Record<string, Operation>)) {
      if (!operation?.responses) continue;
      const rateLimited = (operation.security ?? []).some((scheme) => "bearerAuth" in scheme);
      for (const [status, response] of Object.entries(operation.responses)) {
        const declared = Object.fromEntries(headersOf(Number(status), rateLimited).map((name) => [name, { $ref: `#/components/headers/${name}` }]));
        response.headers = { ...declared, ...response.headers };
      }
    }
  }
  return document;
}

export { z };

/**
 * A route's JSON body schema, parsed synchronously by the route's validator.
 * @hono/zod-validator always calls safeParseAsync, and zod runs its compiled
 * object parsers only in a synchronous parse: a 500-op push body took ~0.6 ms
 * longer and built ~1 MB more garbage the async way (docs/performance-history.md).
 * Only for schemas without async checks; `schema` is a route's own instance
 * (e.g. from .meta({ id })), changed in place so the document keeps its id.
 */
export function parsedSynchronously<T extends z.ZodType>(schema: T): T {
  schema.safeParseAsync = (data: unknown, params?: z.core.ParseContext<z.core.$ZodIssue>) => Promise.resolve(schema.safeParse(data, params));
  return schema;
}

// Shared pieces of route definitions so every route documents the same error
// envelope and headers, generated from the same zod schemas that validate.
import { z } from "@hono/zod-openapi";
import { ERROR_CODES, type ErrorCode, errorEnvelopeSchema } from "../../_shared/errors.ts";

// Components are named with zod's native .meta({ id }): .openapi() needs a patched zod
// prototype, which Node (a second zod instance) does not share.
export const ErrorEnvelope = errorEnvelopeSchema.meta({ id: "ErrorEnvelope" });

const DESCRIPTIONS: Record<number, string> = {
  400: "MALFORMED_JSON, VALIDATION_FAILED or INVALID_CURSOR",
  401: "UNAUTHENTICATED: token missing, invalid, expired, or its session was revoked",
  403: "FORBIDDEN: the token is not a signed-in user's",
  404: "NOT_FOUND: no such object (also for other users' objects)",
  405: "METHOD_NOT_ALLOWED",
  408: "REQUEST_TIMEOUT: the body did not arrive within the server's deadline; retryable",
  410: "RESYNC_REQUIRED: pull from scratch",
  412: "PRECONDITION_FAILED: If-Match is stale",
  413: "PAYLOAD_TOO_LARGE",
  415: "UNSUPPORTED_MEDIA_TYPE: send application/json",
  431: "HEADERS_TOO_LARGE: the request headers exceed the limit",
  429: "RATE_LIMITED: retry after Retry-After seconds",
  500: "INTERNAL: unexpected; retryable",
  503: "UNAVAILABLE: a dependency timed out; retry after Retry-After seconds",
};

/** Error responses for a route: the statuses of the given codes plus those every route can give. */
export function errorResponses(...codes: ErrorCode[]) {
  const statuses = new Set<number>([431, 500, 503, ...codes.map((code) => ERROR_CODES[code].status)]);
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

export { z };

/**
 * A route's JSON body schema, parsed synchronously by the route's validator.
 * @hono/zod-validator always calls safeParseAsync, and zod runs its compiled
 * object parsers only in a synchronous parse: a 500-op push body took ~0.6 ms
 * longer and built ~1 MB more garbage the async way (docs/performance.md).
 * Only for schemas without async checks; `schema` is a route's own instance
 * (e.g. from .meta({ id })), changed in place so the document keeps its id.
 */
export function parsedSynchronously<T extends z.ZodType>(schema: T): T {
  schema.safeParseAsync = (data: unknown, params?: z.core.ParseContext<z.core.$ZodIssue>) => Promise.resolve(schema.safeParse(data, params));
  return schema;
}

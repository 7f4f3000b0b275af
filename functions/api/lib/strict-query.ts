// One rule for query strings (api-v1.md: VALIDATION_FAILED covers unexpected
// fields; docs/errors.md#query-parameters): every operation refuses a query
// parameter it does not declare, 400 with an unexpected_field detail, as it
// refuses an unknown body field. A route that declares no query gets an empty
// strict one; a declared z.object is made strict. A route whose query belongs
// to someone else declares it z.looseObject and says why (Expo Updates).
import { z } from "@hono/zod-openapi";
import type { App } from "./app-env.ts";
import { errorResponses } from "./openapi-helpers.ts";

type Query = z.ZodObject | undefined;

export function strictQuery(query: Query): z.ZodObject {
  if (!query) return z.strictObject({});
  // Zod's default (strip) has no catchall; loose and strict objects have one.
  return query._zod.def.catchall === undefined ? query.strict() : query;
}

/**
 * Makes every route registered on `app` with app.openapi from now on validate
 * its query strictly, and list the 400 that answers an unknown parameter.
 */
export function strictQueries(app: App): void {
  const register = app.openapi.bind(app);
  app.openapi = ((route, handler, hook) => {
    const query = strictQuery(route.request?.query as Query);
    const refusesUnknown = query._zod.def.catchall !== undefined && query._zod.def.catchall._zod.def.type === "never";
    const responses = refusesUnknown ? { 400: errorResponses("VALIDATION_FAILED")[400], ...route.responses } : route.responses;
    return register({ ...route, request: { ...route.request, query }, responses }, handler, hook);
  }) as App["openapi"];
}

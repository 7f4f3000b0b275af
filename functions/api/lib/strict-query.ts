// One rule for query strings (api-v1.md: VALIDATION_FAILED covers unexpected
// fields; docs/errors.md#query-parameters): every operation refuses a query
// parameter it does not declare, 400 with an unexpected_field detail, as it
// refuses an unknown body field. A route that declares no query gets an empty
// strict one; a declared z.object is made strict. A route whose query belongs
// to someone else declares it z.looseObject and says why (Expo Updates).
//
// The query is checked before the caller's budget is spent: it is part of the
// request line, so refusing it reads nothing, and a misspelt parameter must not
// cost a user one of their 3 exports an hour. @hono/zod-openapi runs a route's
// validators after its middleware (requireUser spends the budget there), so
// the query's validator is the route's own middleware instead: requireUser
// runs it between the token and the budget, and a route without requireUser
// runs it after its other middleware, where @hono/zod-openapi would have.
import { z } from "@hono/zod-openapi";
import type { Context, MiddlewareHandler } from "hono";
import { validator } from "hono/validator";
import type { App, AppEnv } from "./app-env.ts";
import { errorResponses } from "./openapi-helpers.ts";

type Query = z.ZodObject | undefined;
type Hook = (result: unknown, c: Context) => unknown;

export function strictQuery(query: Query): z.ZodObject {
  if (!query) return z.strictObject({});
  // Zod's default (strip) has no catchall; loose and strict objects have one.
  return query._zod.def.catchall === undefined ? query.strict() : query;
}

/** Validates the request's query (c.req.valid("query")), once however often called; a refused one throws 400. */
export async function checkQuery(c: Context<AppEnv>): Promise<void> {
  await c.get("checkQuery")?.();
}

/** The validator @hono/zod-openapi would build for the query (@hono/zod-validator's, with the app's hook). */
function queryValidator(query: z.ZodObject, hook: Hook | undefined): MiddlewareHandler<AppEnv> {
  return validator("query", async (parsed, c) => {
    // Hono's parser drops a parameter with an empty name (`?=1`, `?=`): read from the URL, it is
    // refused as undeclared like any other.
    const params = new URL(c.req.url).searchParams;
    const value = params.has("") ? { ...parsed, "": params.get("") } : parsed;
    const result = await query.safeParseAsync(value);
    // The app's hook throws the 400 VALIDATION_FAILED envelope for a failed result.
    await hook?.({ data: value, ...result, target: "query" }, c);
    if (!result.success) throw result.error;
    return result.data;
  }) as MiddlewareHandler<AppEnv>;
}

/**
 * Makes every route registered on `app` with app.openapi from now on validate
 * its query strictly, before its budget is spent, and list the 400 that
 * answers an unknown parameter.
 */
export function strictQueries(app: App): void {
  const register = app.openapi.bind(app);
  app.openapi = ((route, handler, hook) => {
    const query = strictQuery(route.request?.query as Query);
    const refusesUnknown = query._zod.def.catchall !== undefined && query._zod.def.catchall._zod.def.type === "never";
    const responses = refusesUnknown ? { 400: errorResponses("VALIDATION_FAILED")[400], ...route.responses } : route.responses;
    const { middleware, hide, ...documented } = { ...route, request: { ...route.request, query }, responses };
    // The document lists the query; the router validates it through checkQuery, not after the middleware.
    if (!hide) app.openAPIRegistry.registerPath(documented);
    const validate = queryValidator(query, (hook ?? app.defaultHook) as Hook | undefined);
    const prepare: MiddlewareHandler<AppEnv> = async (c, next) => {
      let checked: Promise<unknown> | undefined;
      c.set("checkQuery", async () => {
        await (checked ??= validate(c, () => Promise.resolve()));
      });
      await next();
    };
    const check: MiddlewareHandler<AppEnv> = async (c, next) => {
      await checkQuery(c);
      await next();
    };
    const routeMiddleware = middleware === undefined ? [] : Array.isArray(middleware) ? middleware : [middleware];
    return register({
      ...route,
      hide: true,
      request: { ...route.request, query: undefined },
      middleware: [prepare, ...routeMiddleware, check],
      responses,
    }, handler, hook);
  }) as App["openapi"];
}

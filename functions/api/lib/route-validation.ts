// How every operation validates its request (app.openapi, validateRequests): its path
// parameters, its query and its declared JSON body, by the route's schemas, failures answered
// 400 VALIDATION_FAILED.
//
// The query (api-v1.md: VALIDATION_FAILED covers unexpected fields;
// docs/errors.md#query-parameters): every operation refuses a query parameter
// it does not declare, 400 with an unexpected_field detail, as it refuses an
// unknown body field. A route that declares no query gets an empty strict one;
// a declared z.object is made strict. A route whose query belongs to someone
// else declares it z.looseObject and says why (Expo Updates).
//
// The query is checked before the caller's budget is spent: it is part of the
// request line, so refusing it reads nothing, and a misspelt parameter must not
// cost a user one of their 3 exports an hour. @hono/zod-openapi runs a route's
// validators after its middleware (requireUser spends the budget there), so
// the query's validator is the route's own middleware instead: requireUser
// runs it between the token and the budget, and a route without requireUser
// runs it after its other middleware, where @hono/zod-openapi would have.
// The path parameters are the request line too (GET /v1/sync/records/{collection}/{id}): checked
// with the query, ahead of it, on the same terms.
//
// The body: a declared JSON body's validator is the route's own too, for one
// rule about which bodies are JSON: the route's body middleware checks the
// media type (middleware.ts, readJsonBodyBytes) and parses the body, and the
// validator here runs the schema on that value. @hono/zod-openapi would add a
// media-type gate of its own with another rule (it refused `application/json ;
// charset=utf-8`, legal per RFC 9110, after ours accepted it), so the router
// is given the route without its body; the document still lists it.
import { z } from "@hono/zod-openapi";
import type { Context, MiddlewareHandler } from "hono";
import { validator } from "hono/validator";
import type { App, AppEnv } from "./app-env.ts";
import { errorResponses } from "./openapi-helpers.ts";

type Query = z.ZodObject | undefined;
type Hook = (result: unknown, c: Context) => unknown;
interface DeclaredBody {
  content: Record<string, { schema?: unknown } | undefined>;
}

export function strictQuery(query: Query): z.ZodObject {
  if (!query) return z.strictObject({});
  // Zod's default (strip) has no catchall; loose and strict objects have one.
  return query._zod.def.catchall === undefined ? query.strict() : query;
}

/** Validates the request's path parameters and query (c.req.valid), once however often called; a refused one throws 400. */
export async function checkQuery(c: Context<AppEnv>): Promise<void> {
  await c.get("checkQuery")?.();
}

function hasEmptyName(url: string): boolean {
  return url.includes("?=") || url.includes("&=");
}

function withEmptyName(url: string, parsed: Record<string, unknown>): Record<string, unknown> {
  const params = new URL(url).searchParams;
  return params.has("") ? { ...parsed, "": params.get("") } : parsed;
}

/** The validator @hono/zod-openapi would build for the query or the path (@hono/zod-validator's, with the app's hook). */
function requestLineValidator(target: "query" | "param", schema: z.ZodObject, hook: Hook | undefined): MiddlewareHandler<AppEnv> {
  return validator(target, async (parsed, c) => {
    // Hono's parser drops a parameter with an empty name (`?=1`, `?=`): read from the URL, it is
    // refused as undeclared like any other. Only a URL with `?=` or `&=` can hold one, so no
    // other request parses its URL a second time.
    const value = target === "query" && hasEmptyName(c.req.url) ? withEmptyName(c.req.url, parsed) : parsed;
    const result = await schema.safeParseAsync(value);
    // The app's hook throws the 400 VALIDATION_FAILED envelope for a failed result.
    await hook?.({ data: value, ...result, target }, c);
    if (!result.success) throw result.error;
    return result.data;
  }) as MiddlewareHandler<AppEnv>;
}

/**
 * The validator of a route's declared body (c.req.valid("json")): its schema run on the value the
 * route's own middleware parsed after the media-type check (jsonBody, optionalJsonBody,
 * requireReleaseWebhook), the app's hook answering a failure as it does for the query.
 */
function bodyValidator(body: DeclaredBody, hook: Hook | undefined): MiddlewareHandler<AppEnv> {
  const schema = body.content["application/json"]?.schema as z.ZodType | undefined;
  if (Object.keys(body.content).length !== 1 || typeof schema?.safeParseAsync !== "function") {
    throw new Error("a request body is application/json with a zod schema");
  }
  return async (c, next) => {
    const value = c.get("jsonBody");
    if (value === undefined) throw new Error(`${c.req.method} ${c.req.routePath} declares a JSON body but reads none (jsonBody)`);
    const result = await schema.safeParseAsync(value);
    await hook?.({ data: value, ...result, target: "json" }, c);
    if (!result.success) throw result.error;
    c.req.addValidatedData("json", result.data as object);
    await next();
  };
}

/**
 * Makes every route registered on `app` with app.openapi from now on validate
 * its path parameters and its query (strictly), before its budget is spent, and list the 400 that
 * answers an unknown parameter; and validate its body (if it declares one)
 * after its middleware read it.
 */
export function validateRequests(app: App): void {
  const register = app.openapi.bind(app);
  app.openapi = ((route, handler, hook) => {
    const query = strictQuery(route.request?.query as Query);
    const refusesUnknown = query._zod.def.catchall !== undefined && query._zod.def.catchall._zod.def.type === "never";
    const responses = refusesUnknown ? { 400: errorResponses("VALIDATION_FAILED")[400], ...route.responses } : route.responses;
    const { middleware, hide, ...documented } = { ...route, request: { ...route.request, query }, responses };
    // The document lists the query; the router validates it through checkQuery, not after the middleware.
    if (!hide) app.openAPIRegistry.registerPath(documented);
    const appHook = (hook ?? app.defaultHook) as Hook | undefined;
    const params = route.request?.params as Query;
    const validators = [...(params ? [requestLineValidator("param", params, appHook)] : []), requestLineValidator("query", query, appHook)];
    const validate = async (c: Context<AppEnv>) => {
      for (const check of validators) await check(c, () => Promise.resolve());
    };
    const body = route.request?.body as DeclaredBody | undefined;
    const validateBody = body ? [bodyValidator(body, appHook)] : [];
    const prepare: MiddlewareHandler<AppEnv> = async (c, next) => {
      let checked: Promise<unknown> | undefined;
      c.set("checkQuery", async () => {
        await (checked ??= validate(c));
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
      request: { ...route.request, params: undefined, query: undefined, body: undefined },
      middleware: [prepare, ...routeMiddleware, check, ...validateBody],
      responses,
    }, handler, hook);
  }) as App["openapi"];
}

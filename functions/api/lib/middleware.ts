// Cross-cutting request rules of api-v1.md: request ids, no-store, one JSON log
// line per request, body size and media type, authentication + rate limits.
import type { Context, MiddlewareHandler } from "hono";
import { ApiError, type FieldDetail } from "../../_shared/errors.ts";
import { MAX_REQUEST_HEADER_BYTES } from "../../_shared/limits.ts";
import { type InexactNumber, inexactNumberAt, inexactNumberDetail, inexactNumbersIn, mayHoldInexactNumber } from "../../_shared/inexact-numbers.ts";
import { longNumberLiterals } from "../../_shared/long-number-literals.ts";
import { isNonFiniteNumberLiteral, nonFiniteNumberAt } from "../../_shared/non-finite-numbers.ts";
import { boundedDetails, validationMessage } from "../../_shared/validation-details.ts";
import type { AppEnv, Deps } from "./app-env.ts";
import type { Config } from "./config.ts";
import { Aal2Required, type SessionUse } from "./db.ts";
import { consumeRateLimit } from "./rate-limit.ts";
import type { RateLimitRule } from "./rate-limit-rules.ts";
import { checkQuery } from "./route-validation.ts";
import { TokenRefused, type UserClaims } from "./verify-token.ts";

const SANE_REQUEST_ID = /^[A-Za-z0-9._:\-]{8,128}$/;

/** The caller's X-Request-Id when it is sane, else a new one (also used by the local gateway's own errors). */
export function requestIdFor(incoming: string | null | undefined): string {
  return incoming && SANE_REQUEST_ID.test(incoming) ? incoming : crypto.randomUUID();
}

export function requestContext(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const started = performance.now();
    const requestId = requestIdFor(c.req.header("x-request-id"));
    c.set("requestId", requestId);
    c.set("logFields", {});
    await next();
    c.res.headers.set("X-Request-Id", requestId);
    // Every answer, the Expo Updates manifest's too (docs/errors.md#headers-on-every-response).
    c.res.headers.set("Cache-Control", "no-store");
    const user = c.get("user");
    const line: Record<string, unknown> = {
      level: c.res.status >= 500 ? "error" : c.res.status >= 400 ? "warn" : "info",
      time: new Date().toISOString(),
      msg: "request",
      request_id: requestId,
      method: c.req.method,
      route: c.req.routePath,
      // The route of a request refused before routing (413, 431, 404, 405, a preflight) is "/api/*".
      // Without the query string, which may carry a cursor or a token.
      path: c.req.path,
      status: c.res.status,
      duration_ms: Math.round((performance.now() - started) * 100) / 100,
      ...(user ? { user_id: user.sub, session_id: user.session_id } : {}),
    };
    // A route's field never replaces one of these (a "level" of its own hid 5xx from level filters).
    for (const [key, value] of Object.entries(c.get("logFields"))) if (!(key in line)) line[key] = value;
    console.log(JSON.stringify(line));
  };
}

/** Rejects oversized request headers (e.g. a huge token) before anything reads them. */
export function headerSizeLimit(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    let bytes = 0;
    for (const [name, value] of c.req.raw.headers) bytes += name.length + value.length + 4; // ": " and CRLF
    if (bytes > MAX_REQUEST_HEADER_BYTES) {
      throw new ApiError("HEADERS_TOO_LARGE", `the request headers must be at most ${MAX_REQUEST_HEADER_BYTES} bytes in all`);
    }
    await next();
  };
}

/** Rejects a declared oversize body before anything reads it. */
export function declaredBodyLimit(deps: Deps): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const declared = c.req.header("content-length");
    if (declared !== undefined && Number(declared) > deps.config.limits.max_body_bytes) {
      throw new ApiError("PAYLOAD_TOO_LARGE", `the request body must be at most ${deps.config.limits.max_body_bytes} bytes`);
    }
    await next();
  };
}

/**
 * A HEAD is a GET without the body (Hono serves it through the GET route). On a route a bearer
 * token opens, that GET spends the caller's rate limit and reads the database (an export: all of
 * the user's data, 3 an hour) for an answer nobody receives, so such a route answers HEAD 405
 * before the token is read (app.ts adds Allow). Routes that need no token (/v1/meta,
 * /v1/openapi.json) and the signed release reads answer HEAD as GET (docs/errors.md).
 */
function refuseHead(c: Context): void {
  if (c.req.method === "HEAD") throw new ApiError("METHOD_NOT_ALLOWED", "HEAD is not allowed here; use GET");
}

/** The caller's verified claims; a token refused says why in the log line (token_refusal). */
async function verifiedCaller(c: Context<AppEnv>, deps: Deps, authorization: string | undefined): Promise<UserClaims> {
  try {
    return await deps.verifyToken(authorization);
  } catch (error) {
    if (error instanceof TokenRefused) c.get("logFields").token_refusal = error.refusal;
    throw error;
  }
}

/**
 * Spends one unit of the user's budget for `operation`; the same statement reads the database's clock
 * (c.var.serverTime) and the session's assurance level (c.var.aal).
 */
async function spendBudget(
  c: Context<AppEnv>,
  deps: Deps,
  user: UserClaims,
  operation: string,
  rule: RateLimitRule,
  use?: SessionUse,
): Promise<void> {
  const { headers, serverTime, aal } = await consumeRateLimit(deps.db, user, operation, rule, use);
  c.set("serverTime", serverTime);
  c.set("aal", aal);
  for (const [name, value] of Object.entries(headers)) c.header(name, value);
}

/**
 * Takes what a route needs before the caller's budget is spent, or throws to
 * refuse the request (its answer then spends none); returns how to give it
 * back (once, however often called), which requireUser calls when the request
 * is answered with an error (the handler of a successful answer gives it back).
 */
export type Admit = (c: Context<AppEnv>) => () => void;

export interface RequireUserOptions {
  admit?: Admit;
  /** What the route does with the caller's session (db.ts, SessionUse); its work passes the same to withUser. */
  use?: SessionUse;
}

/**
 * Verifies the caller's token, checks the query (a request refused for it
 * spends nothing), admits the request (`admit`, if given) and spends one unit
 * of their budget for `operation`, refusing a session whose standing `use`
 * does not accept; the same statement reads the database's clock
 * (c.var.serverTime).
 */
export function requireUser(deps: Deps, operation: string, { admit, use }: RequireUserOptions = {}): MiddlewareHandler<AppEnv> {
  const rule = deps.config.rateLimits[operation];
  if (!rule) throw new Error(`no rate limit rule for operation ${operation}`);
  return async (c, next) => {
    refuseHead(c);
    const user = await verifiedCaller(c, deps, c.req.header("authorization"));
    c.set("user", user);
    await checkQuery(c);
    const giveBack = admit?.(c);
    try {
      await spendBudget(c, deps, user, operation, rule, use);
      await next();
    } catch (error) {
      giveBack?.();
      throw error;
    }
    // Refused after admission without a throw reaching here (Hono answers a handler's error
    // through onError): nothing holds the slot.
    if (!c.res.ok) giveBack?.();
  };
}

/**
 * Bodies are taken as sent: a Content-Encoding other than identity (gzip, br, …) is 415 before any
 * of the body is read, naming the one coding taken (RFC 9110 §8.4, RFC 7694), where reading it as
 * it came would make a compressed body "not JSON" and take a coded one for plain text.
 */
function requireIdentityEncoding(c: Context): void {
  const coding = c.req.header("content-encoding")?.trim().toLowerCase();
  if (coding && coding !== "identity") {
    throw new ApiError("UNSUPPORTED_MEDIA_TYPE", "send the body uncompressed (Content-Encoding: identity, or none)", {
      headers: { "Accept-Encoding": "identity" },
    });
  }
}

/**
 * Reads the whole request body, if any, once requireIdentityEncoding has passed it: at
 * most `limits.max_body_bytes` (413, also
 * for a chunked body that declares no length) within
 * `http.bodyReadTimeoutMs` from the start of the read (408
 * REQUEST_TIMEOUT): a client that sends its body a byte at a time gets an
 * answer, and its request ends, at the deadline. A request behind the
 * admission limit holds no slot meanwhile (concurrency-limit.ts): a body still
 * arriving never keeps a ready request waiting.
 */
export async function readBodyBytes(c: Context, config: Pick<Config, "limits" | "http">): Promise<Uint8Array> {
  const body = c.req.raw.body;
  // A request without a body (a signed CI read, a bodiless POST) has nothing its coding could
  // change. Deno hands a POST an empty stream even then, so a body is known to be there only when
  // declared (a Content-Length above 0, or Transfer-Encoding): its coding is refused before the
  // read; an undeclared one (HTTP/2 may send a body without either) only once read and not empty.
  if (!body) return new Uint8Array();
  const length = c.req.header("content-length");
  const declared = c.req.header("transfer-encoding") !== undefined || (length !== undefined && Number(length) !== 0);
  if (declared) requireIdentityEncoding(c);
  const admission = c.get("admission");
  const bytes = admission ? await admission.without(() => readWithin(c, body, config)) : await readWithin(c, body, config);
  if (!declared && bytes.length > 0) requireIdentityEncoding(c);
  return bytes;
}

async function readWithin(c: Context, body: ReadableStream<Uint8Array>, config: Pick<Config, "limits" | "http">): Promise<Uint8Array> {
  const max = config.limits.max_body_bytes;
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  // One timer per body: at the deadline the stream is cancelled, which ends
  // the pending read (done) without a race per chunk.
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    reader.cancel().catch(() => {});
  }, config.http.bodyReadTimeoutMs);
  try {
    for (;;) {
      let chunk: ReadableStreamReadResult<Uint8Array>;
      try {
        chunk = await reader.read();
      } catch (error) {
        if (timedOut) break;
        // The client sent less than it declared, or the connection broke mid-body.
        throw new ApiError("MALFORMED_JSON", "the request body could not be read completely", { cause: error });
      }
      const { done, value } = chunk;
      if (done) break;
      total += value.byteLength;
      if (total > max) {
        await reader.cancel();
        throw new ApiError("PAYLOAD_TOO_LARGE", `the request body must be at most ${max} bytes`);
      }
      chunks.push(value);
    }
  } finally {
    clearTimeout(timer);
  }
  if (timedOut) {
    c.get("logFields").body_bytes_received = total;
    // Connection: close: the connection is mid-body, so the client must not
    // send another request on it (and should stop sending this one).
    throw new ApiError("REQUEST_TIMEOUT", `the request body did not arrive within ${config.http.bodyReadTimeoutMs} ms; send it again`, {
      headers: { Connection: "close" },
    });
  }
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}

/**
 * The one rule for which bodies are JSON (route-validation.ts gives @hono/zod-openapi no body, so its
 * media-type gate never runs). RFC 9110 §5.6.6: `application/json`, then each parameter after
 * optional whitespace, a `;` and optional whitespace; the only parameter taken is charset=utf-8
 * (quoted or not), with no whitespace around its `=`, which the grammar does not allow. Each run of
 * whitespace has one place in the pattern: were the whitespace between two `;` matchable by the
 * `[ \t]*` after one or the one before the next, a header of many `;` that fails at its end would
 * backtrack through every split (a 71-byte header held the event loop 39 s).
 */
const JSON_MEDIA_TYPE = /^application\/json[ \t]*(?:;[ \t]*(?:charset=(?:utf-8|"utf-8")[ \t]*)?)*$/i;

/**
 * The part of a parsed body whose numbers refuse the whole request (400):
 * all of it, unless a route answers some items on their own (the sync push,
 * op by op) and passes the body without those items' content. A number there
 * that JSON.parse turns into ±Infinity (`1e309`: not_finite) or reads as
 * another number (`1e-400` as 0, `12345678901234567890` as
 * 12345678901234567000: not_exact, inexact-numbers.ts) is refused where it
 * is: no JSON route stores a number a double changed, an integer field given
 * a literal that is not exactly that integer, or a number of a JSON document
 * kept as sent (an OTA update's expo_client).
 */
export type WholeRequestPart = (value: unknown) => unknown;

/**
 * The one order in which every body route (jsonBody, optionalJsonBody, CI's writes) checks and
 * reads a JSON body (docs/errors.md, Order of checks): Content-Type (415), Content-Encoding (415,
 * readBodyBytes), then the bytes within the size limit and the read deadline (413 / 408). Where
 * the body is `optional`, a request without a Content-Type may have none; if it has one after
 * all, it is 415 once read, when it is known to be there.
 */
export async function readJsonBodyBytes(
  c: Context,
  config: Pick<Config, "limits" | "http">,
  { optional = false }: { optional?: boolean } = {},
): Promise<Uint8Array> {
  const typed = c.req.header("content-type") !== undefined;
  if (typed || !optional) requireJsonMediaType(c);
  const bytes = await readBodyBytes(c, config);
  if (!typed && bytes.length > 0) requireJsonMediaType(c);
  return bytes;
}

/**
 * Reads a JSON body (readJsonBodyBytes), then hands the parsed value to the
 * route's zod validator.
 */
export function jsonBody(deps: Deps, wholeRequestPart?: WholeRequestPart): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    acceptJsonBody(c, await readJsonBodyBytes(c, deps.config), wholeRequestPart);
    await next();
  };
}

/**
 * jsonBody for a route whose body is optional: no body (without a Content-Type,
 * or an empty one as application/json) reads as {}; a body must be JSON.
 */
export function optionalJsonBody(deps: Deps): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const bytes = await readJsonBodyBytes(c, deps.config, { optional: true });
    if (bytes.length === 0) useJsonBody(c, "", {}, []);
    else acceptJsonBody(c, bytes);
    await next();
  };
}

function requireJsonMediaType(c: Context): void {
  const type = c.req.header("content-type") ?? "";
  if (!JSON_MEDIA_TYPE.test(type.trim())) throw new ApiError("UNSUPPORTED_MEDIA_TYPE", "send the body as application/json");
}

/** Parses the body bytes already read and hands the value to the route's zod validator. */
export function acceptJsonBody(c: Context, bytes: Uint8Array, wholeRequestPart: WholeRequestPart = (value) => value): void {
  let text: string;
  let value: unknown;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    value = JSON.parse(text);
  } catch {
    throw new ApiError("MALFORMED_JSON", "the request body is not valid JSON");
  }
  // One scan for long number literals serves every rule about numbers (long-number-literals.ts):
  // none in almost every body, and then no walk at all.
  const literals = longNumberLiterals(text);
  const infinite = literals.some(isNonFiniteNumberLiteral) ? nonFiniteNumberAt(wholeRequestPart(value)) : null;
  if (infinite !== null) {
    // JSON.parse turns 1e309 into Infinity, which would later serialise as null.
    throw new ApiError("VALIDATION_FAILED", "a number is out of range", {
      details: [{ field: infinite, code: "not_finite", message: "must be a finite number" }],
    });
  }
  // The numbers JSON.parse read as others, with their paths: the walk runs only for a body that has one.
  const inexact = mayHoldInexactNumber(text, literals) ? inexactNumbersIn(text) : [];
  if (inexact.length > 0) {
    const part = wholeRequestPart(value);
    const altered = inexact.flatMap((found): FieldDetail[] => {
      const pointer = inexactNumberAt(part, found);
      return pointer === null ? [] : [inexactNumberDetail(pointer, found.literal)];
    });
    if (altered.length > 0) throw new ApiError("VALIDATION_FAILED", validationMessage(altered.length), { details: boundedDetails(altered) });
  }
  useJsonBody(c, text, value, inexact);
}

function useJsonBody(c: Context, text: string, value: unknown, inexact: InexactNumber[]): void {
  // The route's validator reads the parsed value (c.var.jsonBody); c.req.text() reads the text, and
  // the push its ops' inexact numbers (c.var.inexactNumbers). Only the text is cached: with a parsed
  // value cached, Hono's other readers would JSON.stringify it first (a stack overflow, hence a 500,
  // on a deeply nested body). (Hono stores promises in the cache, whatever its type says.)
  c.req.bodyCache.text = Promise.resolve(text) as unknown as string;
  c.set("jsonBody", value);
  c.set("inexactNumbers", inexact);
}

/**
 * Why optionalUser went on without the request's token: `expired` (a token of
 * this project past its exp), `invalid` (any other token the verifier refuses:
 * not a JWT, another key or issuer, not a user's session), `signed_out` (its
 * session is gone), `aal2_required` (its session is the password step of an
 * MFA user's sign-in: aal1 while the user has a verified factor).
 */
export const IGNORED_TOKENS = ["expired", "invalid", "signed_out", "aal2_required"] as const;
export type IgnoredToken = typeof IGNORED_TOKENS[number];
export const TOKEN_IGNORED_HEADER = "Tidesync-Token-Ignored";

/** Which refusal of requireUser's checks optionalUser ignores; anything else (429, 503) stands. */
function ignoredToken(error: unknown, verified: boolean): IgnoredToken | null {
  if (!(error instanceof ApiError)) return null;
  if (!verified) {
    if (error instanceof TokenRefused) return error.reason;
    // A token of another role (the project's anon key): no user session.
    return error.code === "UNAUTHENTICATED" || error.code === "FORBIDDEN" ? "invalid" : null;
  }
  if (error instanceof Aal2Required) return "aal2_required";
  return error.code === "UNAUTHENTICATED" ? "signed_out" : null;
}

/**
 * For the Expo Updates manifest, where a token only adds channels: a token that
 * opens a live session makes the request that user's (requireUser: their rate
 * limit); a request without one, or whose token opens none, goes on anonymous,
 * seeing exactly what a request without a token sees. expo-updates keeps
 * sending the header it was given, so a 401 there would keep an app from every
 * update, a fix included, until the app itself is fixed (docs/test-builds.md,
 * "The token and expo-updates"). An ignored token is named in the Tidesync-Token-Ignored
 * response header and the log line's token_ignored. An empty header is no token.
 */
export function optionalUser(deps: Deps, operation: string): MiddlewareHandler<AppEnv> {
  const rule = deps.config.rateLimits[operation];
  if (!rule) throw new Error(`no rate limit rule for operation ${operation}`);
  return async (c, next) => {
    refuseHead(c);
    const authorization = c.req.header("authorization");
    if (authorization?.trim()) {
      let verified = false;
      try {
        const user = await verifiedCaller(c, deps, authorization);
        verified = true;
        await checkQuery(c);
        await spendBudget(c, deps, user, operation, rule);
        c.set("user", user);
      } catch (error) {
        const ignored = ignoredToken(error, verified);
        if (!ignored) throw error;
        c.set("tokenIgnored", ignored);
        c.header(TOKEN_IGNORED_HEADER, ignored);
        c.get("logFields").token_ignored = ignored;
      }
    }
    await next();
  };
}

// Everything the generated cases draw on, gathered once before the run: the
// operations from the served OpenAPI document, the published limits, tokens
// (one good, many subtly bad), and real ids and cursors of the caller and of
// another user, harvested from the API itself so "another user's id" and
// "a tampered real cursor" are exercised on whatever routes exist.
import { randomUUID } from "node:crypto";
import fc from "fast-check";
import type { JWK } from "jose";
import type postgres from "postgres";
import { Webhook } from "standardwebhooks";
import { requestLine } from "../../functions/_shared/releases/webhook-signature.ts";
import { isUuid } from "../../functions/_shared/uuid.ts";
import { signEs256, signHs256, supabaseClaims } from "../support/tokens.ts";
import { listOperations, type OpenApiDocument, type Operation } from "./openapi-operations.ts";
import { schemaArbitrary, type SchemaHints } from "./schema-arbitrary.ts";
import { buildSyncSurface, type SyncSurface } from "./sync-push-cases.ts";
import { sendRequest } from "./send-request.ts";

export interface FuzzUser {
  userId: string;
  sessionId: string;
  token: string;
  tokenWith(options?: { claims?: Record<string, unknown>; expiresInSeconds?: number }): Promise<string>;
  newSession(): Promise<{ sessionId: string; token: string }>;
}

export interface FuzzSetup {
  /** `http://host:port/functions/v1/api` */
  apiUrl: string;
  keys: { privateJwk: JWK; hsSecret: string };
  /** Superuser connection to the stack's database (to revoke sessions, delete users). */
  adminSql: postgres.Sql;
  createUser(): Promise<FuzzUser>;
  seed: number;
  /** The server's TIDESYNC_RELEASES_WEBHOOK_SECRET: signed operations (CI's) are signed with it. */
  webhookSecret?: string;
}

export interface AuthVariant {
  label: string;
  /** The Authorization header; undefined = none sent. */
  value: string | undefined;
}

export interface FuzzContext {
  doc: OpenApiDocument;
  operations: Operation[];
  /** `http://host:port` */
  origin: string;
  /** Path prefix of every documented path's host, e.g. /functions/v1. */
  prefix: string;
  limits: Record<string, number>;
  collections: string[];
  hints: SchemaHints;
  /** Good token of the fuzzing user. */
  token: string;
  /** A fresh session of the fuzzing user, for operations that may sign it out. */
  throwawayToken(): Promise<string>;
  /** A new user's token, for operations on the whole account (deletion signs out every other session). */
  throwawayUserToken(): Promise<string>;
  authVariants: AuthVariant[];
  /** The same variants for a user of their own: what account-wide operations are sent with. */
  accountWideAuthVariants: AuthVariant[];
  ids: { own: string[]; other: string[] };
  cursors: { own: string[]; other: string[] };
  /** Lists, records and devices of the caller and of another user, for pushes on the sync surfaces. */
  sync: SyncSurface;
  /** Standard Webhooks headers signing the request as CI would (empty without a secret: those requests are 401). */
  signWebhook: WebhookSigner;
}

/** Headers signing `method`, `path` (as sent, with the host's prefix) and `body`. */
export type WebhookSigner = (method: string, path: string, body: Buffer | undefined) => Record<string, string>;

/**
 * Signs with the reference implementation, as the CI step in docs/test-builds.md
 * does: the request line (its path from /v1/ on, `base` being what precedes it) and the body.
 */
export function webhookSigner(secret: string | undefined, base: string): WebhookSigner {
  return (method, path, body): Record<string, string> => {
    if (!secret) return {};
    const id = `msg_${randomUUID()}`;
    const now = new Date();
    const target = path.startsWith(base) ? path.slice(base.length) : path;
    const payload = Buffer.concat([Buffer.from(requestLine(method, target)), body ?? Buffer.alloc(0)]);
    return {
      "webhook-id": id,
      "webhook-timestamp": String(Math.floor(now.getTime() / 1000)),
      "webhook-signature": new Webhook(secret).sign(id, now, payload),
    };
  };
}

function harvest(value: unknown, into: { ids: Set<string>; cursors: Set<string> }): void {
  if (Array.isArray(value)) {
    for (const item of value) harvest(item, into);
  } else if (value && typeof value === "object") {
    for (const [key, item] of Object.entries(value)) {
      if (typeof item === "string" && isUuid(item)) into.ids.add(item.toLowerCase());
      if (key === "cursor" && typeof item === "string" && item.length > 0) into.cursors.add(item);
      if (typeof item === "object") harvest(item, into);
    }
  }
}

function b64url(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString("base64url");
}

/**
 * Acts on the whole account: asking for its deletion signs out every other
 * session of the user, so such a request never carries the run's user (a
 * user of its own per case, its own auth variants) and warm-up skips it.
 * Judged by the method a case sends: a GET of the deletion state mutated to
 * a POST (no body needed, api-v1) asks for the deletion too.
 */
export function isAccountWide(op: { method: string; template: string }): boolean {
  return op.method.toUpperCase() === "POST" && /\/v1\/users\/me\/deletion$/.test(op.template);
}

async function buildAuthVariants(setup: FuzzSetup, me: FuzzUser, other: FuzzUser): Promise<AuthVariant[]> {
  // Variants that a lenient server might accept (lower-case scheme…) use a
  // session of their own: a DELETE sent with one may sign it out, and must
  // not sign out the token the rest of the run relies on.
  const own = await me.newSession();
  const mine = { ...me, token: own.token, sessionId: own.sessionId };
  const [headerPart, payloadPart, signaturePart] = mine.token.split(".");
  const otherPayload = other.token.split(".")[1];
  const revoked = await me.newSession();
  await setup.adminSql`delete from auth.sessions where id = ${revoked.sessionId}`;
  const gone = await setup.createUser();
  await setup.adminSql`delete from auth.users where id = ${gone.userId}`;
  const claims = (overrides: Record<string, unknown>) => supabaseClaims({ userId: mine.userId, sessionId: mine.sessionId, claims: overrides });
  const bearer = (token: string) => `Bearer ${token}`;
  return [
    { label: "missing", value: undefined },
    { label: "empty", value: "" },
    { label: "scheme only", value: "Bearer" },
    { label: "scheme and space", value: "Bearer " },
    { label: "basic", value: "Basic dXNlcjpwYXNz" },
    { label: "no scheme", value: mine.token },
    { label: "double space", value: `Bearer  ${mine.token}` },
    { label: "lower-case scheme", value: `bearer ${mine.token}` },
    { label: "trailing junk", value: `Bearer ${mine.token}.x` },
    { label: "two tokens", value: `Bearer ${mine.token}, Bearer ${other.token}` },
    { label: "truncated signature", value: bearer(mine.token.slice(0, -6)) },
    { label: "empty signature", value: bearer(`${headerPart}.${payloadPart}.`) },
    { label: "swapped payload", value: bearer(`${headerPart}.${otherPayload}.${signaturePart}`) },
    { label: "alg none", value: bearer(`${b64url({ alg: "none", typ: "JWT" })}.${payloadPart}.`) },
    { label: "alg HS256 with the public key", value: bearer(`${b64url({ alg: "HS256", typ: "JWT" })}.${payloadPart}.${signaturePart}`) },
    { label: "garbage", value: "Bearer not.a.jwt" },
    { label: "not base64", value: "Bearer %%%.%%%.%%%" },
    { label: "huge", value: bearer("A".repeat(9000) + "." + "B".repeat(9000) + ".C") },
    { label: "expired", value: bearer(await me.tokenWith({ expiresInSeconds: -3600 })) },
    { label: "wrong audience", value: bearer(await me.tokenWith({ claims: { aud: "someone-else" } })) },
    { label: "role anon", value: bearer(await signEs256(setup.keys.privateJwk, claims({ role: "anon" }))) },
    { label: "role service_role", value: bearer(await signEs256(setup.keys.privateJwk, claims({ role: "service_role" }))) },
    { label: "sub not a uuid", value: bearer(await signEs256(setup.keys.privateJwk, claims({ sub: "' or 1=1 --" }))) },
    { label: "no session_id", value: bearer(await signEs256(setup.keys.privateJwk, claims({ session_id: undefined }))) },
    { label: "unknown session", value: bearer(await signEs256(setup.keys.privateJwk, claims({ session_id: "00000000-0000-4000-8000-000000000000" }))) },
    { label: "exp not a number", value: bearer(await signEs256(setup.keys.privateJwk, claims({ exp: "tomorrow" }))) },
    { label: "claims of the wrong types", value: bearer(await signEs256(setup.keys.privateJwk, claims({ aal: 7, email: ["x"], is_anonymous: "yes", amr: "pwd" }))) },
    { label: "revoked session", value: bearer(revoked.token) },
    { label: "deleted user", value: bearer(gone.token) },
    { label: "HS256 with the project secret", value: bearer(await signHs256(setup.keys.hsSecret, claims({}))) },
    { label: "HS256 with another secret", value: bearer(await signHs256("not-the-secret-not-the-secret-123", claims({}))) },
    { label: "another user's valid token", value: bearer(other.token) },
  ];
}

/** Sends a few schema-valid requests as `user` so its objects, ids and cursors exist. */
async function warmUp(setup: FuzzSetup, ctx: Pick<FuzzContext, "doc" | "operations" | "origin" | "hints" | "prefix">, user: FuzzUser, into: { ids: Set<string>; cursors: Set<string> }) {
  // Bodies go through a session of their own: a valid DELETE may sign it out.
  const session = await user.newSession();
  const ordered = [...ctx.operations].sort((a, b) => rank(a) - rank(b));
  for (const op of ordered) {
    if (!op.secured || op.method === "DELETE" || op.pathParams.length > 0 || isAccountWide(op)) continue;
    const bodies = op.body ? fc.sample(schemaArbitrary(ctx.doc, op.body.schema, 0, ctx.hints), { seed: setup.seed, numRuns: 12 }) : [undefined];
    for (const body of bodies) {
      const cursorParam = op.queryParams.find((p) => p.name === "cursor");
      let query = cursorParam ? "?limit=1" : "";
      for (let page = 0; page < (cursorParam ? 3 : 1); page++) {
        const response = await sendRequest({
          origin: ctx.origin,
          method: op.method,
          path: op.template + query,
          headers: {
            authorization: `Bearer ${session.token}`,
            ...(body !== undefined ? { "content-type": "application/json" } : {}),
            ...(op.signed ? webhookSigner(setup.webhookSecret, `${ctx.prefix}/api`)(op.method, op.template + query, body !== undefined ? Buffer.from(JSON.stringify(body)) : undefined) : {}),
          },
          body: body !== undefined ? Buffer.from(JSON.stringify(body)) : undefined,
          timeoutMs: 10_000,
        });
        if (response.kind !== "response" || response.status >= 300) break;
        let parsed: unknown;
        try {
          parsed = JSON.parse(response.body.toString("utf8"));
        } catch {
          break;
        }
        harvest(parsed, into);
        const cursor = (parsed as { cursor?: unknown }).cursor;
        if (!cursorParam || typeof cursor !== "string") break;
        query = `?limit=1&cursor=${encodeURIComponent(cursor)}`;
      }
    }
  }
  into.ids.delete(user.userId);
}

// Create things (POST/PUT) before reading them back (GET), so lists and cursors have content.
function rank(op: Operation): number {
  return op.method === "POST" ? 0 : op.method === "PUT" ? 1 : 2;
}

export async function buildFuzzContext(setup: FuzzSetup): Promise<FuzzContext> {
  const api = new URL(setup.apiUrl);
  const origin = api.origin;
  // Documented paths start with the function's base path (/api); the host adds /functions/v1.
  const prefix = api.pathname.replace(/\/api\/?$/, "");
  const docResponse = await fetch(`${setup.apiUrl}/v1/openapi.json`);
  if (!docResponse.ok) throw new Error(`GET /v1/openapi.json answered ${docResponse.status}`);
  const doc = (await docResponse.json()) as OpenApiDocument;
  const meta = (await (await fetch(`${setup.apiUrl}/v1/meta`)).json()) as { limits: Record<string, number>; collections: string[] };
  const operations = listOperations(doc).map((op) => ({ ...op, template: prefix + op.template }));

  const me = await setup.createUser();
  const other = await setup.createUser();
  const authVariants = await buildAuthVariants(setup, me, other);
  const accountWideAuthVariants = await buildAuthVariants(setup, await setup.createUser(), other);
  const sync = await buildSyncSurface(setup.apiUrl, setup.adminSql, me, other, randomUUID);

  const own = { ids: new Set<string>(), cursors: new Set<string>() };
  const theirs = { ids: new Set<string>(), cursors: new Set<string>() };
  const hints: SchemaHints = { knownValues: { collection: meta.collections } };
  const partial = { doc, operations, origin, hints, prefix };
  await warmUp(setup, partial, other, theirs);
  await warmUp(setup, partial, me, own);
  for (const id of own.ids) theirs.ids.delete(id);

  return {
    doc,
    operations,
    origin,
    prefix,
    limits: meta.limits,
    collections: meta.collections,
    hints,
    token: me.token,
    throwawayToken: async () => (await me.newSession()).token,
    throwawayUserToken: async () => (await setup.createUser()).token,
    authVariants,
    accountWideAuthVariants,
    ids: { own: [...own.ids], other: [...theirs.ids, other.userId, other.sessionId] },
    cursors: { own: [...own.cursors], other: [...theirs.cursors] },
    sync,
    signWebhook: webhookSigner(setup.webhookSecret, `${prefix}/api`),
  };
}

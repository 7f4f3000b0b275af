// What an integration test uses: the stack, real users with real sessions,
// tokens for them, and a small HTTP helper that returns status, headers, body.
import { randomUUID } from "node:crypto";
import postgres from "postgres";
import { afterAll, expect, inject } from "vitest";
import { type AuthUserOptions, insertAuthUser } from "./auth-users.ts";
import { newIds, signEs256, supabaseClaims, type TokenOptions } from "./tokens.ts";

export const stack = inject("stack");

/** Superuser connection to the test database, for setting up and checking state. */
export const adminSql = postgres(stack.adminDbUrl, { max: 4, onnotice: () => {} });
afterAll(async () => {
  await adminSql.end({ timeout: 5 });
});

export interface TestUser {
  userId: string;
  sessionId: string;
  email: string;
  token: string;
  /** Signs another token for this user (other claims, other expiry). */
  tokenWith(options?: Partial<TokenOptions>): Promise<string>;
  /** Opens another Supabase session (another device) and returns its token. */
  newSession(): Promise<{ sessionId: string; token: string }>;
}

export async function createSession(userId: string, sessionId: string = randomUUID()): Promise<string> {
  await adminSql`
    insert into auth.sessions (id, user_id, aal, created_at, updated_at, user_agent)
    values (${sessionId}, ${userId}, 'aal1', now(), now(), 'tidesync tests')`;
  return sessionId;
}

/**
 * A user as Supabase Auth would create it (auth.users row + a session); `userId` as a project
 * chooses one with auth.admin.createUser({ id }).
 */
export async function createTestUser(options: AuthUserOptions & { userId?: string } = {}): Promise<TestUser> {
  const { userId, sessionId } = { ...newIds(), ...(options.userId ? { userId: options.userId } : {}) };
  const email = await insertAuthUser(adminSql, userId, options);
  await createSession(userId, sessionId);
  const tokenWith = (overrides: Partial<TokenOptions> = {}) =>
    signEs256(stack.keys.privateJwk, supabaseClaims({ userId, sessionId, email, ...overrides }));
  return {
    userId,
    sessionId,
    email,
    token: await tokenWith(),
    tokenWith,
    async newSession() {
      const other = await createSession(userId);
      return { sessionId: other, token: await signEs256(stack.keys.privateJwk, supabaseClaims({ userId, sessionId: other, email })) };
    },
  };
}

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface CallOptions {
  method?: string;
  token?: string;
  body?: unknown;
  /** Sent as-is (not JSON-encoded). */
  rawBody?: BodyInit;
  headers?: Record<string, string>;
  baseUrl?: string;
}

/** Calls `${apiUrl}${path}`; JSON-encodes `body`, parses a JSON answer. */
export async function call<T = any>(path: string, options: CallOptions = {}): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = { ...(options.headers ?? {}) };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  let body: BodyInit | undefined = options.rawBody;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers["content-type"] ??= "application/json";
  }
  const init: RequestInit & { duplex?: "half" } = { method: options.method ?? "GET", headers, body };
  // A stream body is sent chunked (no Content-Length); fetch requires half duplex for it.
  if (body instanceof ReadableStream) init.duplex = "half";
  const response = await fetch(`${options.baseUrl ?? stack.apiUrl}${path}`, init);
  const text = await response.text();
  let parsed: unknown = undefined;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: response.status, headers: response.headers, body: parsed as T, text };
}

/** Asserts the documented error envelope and returns its `error` object. */
export function expectEnvelope(response: ApiResponse, status: number, code: string) {
  expect({ status: response.status, code: response.body?.error?.code }).toEqual({ status, code });
  expect(response.headers.get("content-type")).toMatch(/^application\/json/);
  expect(response.headers.get("x-request-id")).toBeTruthy();
  expect(response.body.error.request_id).toBe(response.headers.get("x-request-id"));
  expect(typeof response.body.error.message).toBe("string");
  expect(typeof response.body.error.retryable).toBe("boolean");
  expect(response.text).not.toMatch(/\bat .+\.ts:\d+|\bselect .* from |\binsert into |postgres:\/\/|"stack"/i);
  return response.body.error as { code: string; message: string; retryable: boolean; request_id: string; details?: { field: string; code: string; message: string }[] };
}

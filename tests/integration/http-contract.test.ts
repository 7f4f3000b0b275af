// The cross-cutting HTTP rules of api-v1.md, through real Deno and Postgres.
import net from "node:net";
import { describe, expect, it } from "vitest";
import { call, createTestUser, expectEnvelope, stack } from "../support/harness.ts";
import { signEs256, signHs256, supabaseClaims } from "../support/tokens.ts";
import { createSigningKeys } from "../support/signing-keys.ts";

describe("GET /v1/meta", () => {
  it("answers without auth with version, server time and limits", async () => {
    const response = await call("/v1/meta");
    expect(response.status).toBe(200);
    expect(response.body.api_version).toBe("1");
    expect(Math.abs(Date.parse(response.body.server_time) - Date.now())).toBeLessThan(60_000);
    expect(response.body.limits).toMatchObject({ max_body_bytes: 1048576, max_ops_per_batch: 500, max_pull_limit: 1000 });
    expect(Array.isArray(response.body.collections)).toBe(true);
    expect(response.headers.get("cache-control")).toBe("no-store");
    expect(response.headers.get("x-request-id")).toBeTruthy();
  });

  it("echoes a sane X-Request-Id and replaces an insane one", async () => {
    const sane = await call("/v1/meta", { headers: { "x-request-id": "client-req-12345678" } });
    expect(sane.headers.get("x-request-id")).toBe("client-req-12345678");
    const insane = await call("/v1/meta", { headers: { "x-request-id": "<script>alert(1)</script>" } });
    expect(insane.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("serves the OpenAPI 3.1 document", async () => {
    const response = await call("/v1/openapi.json");
    expect(response.status).toBe(200);
    expect(response.body.openapi).toBe("3.1.0");
    expect(Object.keys(response.body.paths)).toContain("/api/v1/meta");
  });
});

describe("routing errors", () => {
  it("the local gateway's own 404 (no such function) echoes a sane X-Request-Id as the api does", async () => {
    const functionsRoot = stack.apiUrl.replace(/\/api$/, "");
    const sane = await fetch(`${functionsRoot}/nope/v1/meta`, { headers: { "x-request-id": "client-req-12345678" } });
    expect(sane.status).toBe(404);
    expect(sane.headers.get("x-request-id")).toBe("client-req-12345678");
    expect((await sane.json()).error.request_id).toBe("client-req-12345678");
    const insane = await fetch(`${functionsRoot}/nope/v1/meta`, { headers: { "x-request-id": "<bad>" } });
    await insane.body?.cancel();
    expect(insane.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("unknown route → 404 NOT_FOUND in the envelope", async () => {
    const error = expectEnvelope(await call("/v1/no-such-thing"), 404, "NOT_FOUND");
    expect(error.retryable).toBe(false);
  });

  it("wrong method → 405 METHOD_NOT_ALLOWED with Allow", async () => {
    const response = await call("/v1/meta", { method: "DELETE" });
    expectEnvelope(response, 405, "METHOD_NOT_ALLOWED");
    expect(response.headers.get("allow")).toBe("GET");
  });

  it("wrong method on an authenticated route → 405 before any auth, and spends no budget", async () => {
    for (const path of ["/v1/whoami", "/v1/sync/changes"]) {
      const response = await call(path, { method: "DELETE" });
      expectEnvelope(response, 405, "METHOD_NOT_ALLOWED");
      expect(response.headers.get("allow")).toBe("GET");
    }
    const user = await createTestUser();
    expectEnvelope(await call("/v1/whoami", { method: "PUT", token: user.token }), 405, "METHOD_NOT_ALLOWED");
    const ok = await call("/v1/whoami", { token: user.token });
    expect(ok.status).toBe(200);
    const limit = Number(ok.headers.get("ratelimit-limit"));
    expect(Number(ok.headers.get("ratelimit-remaining"))).toBe(limit - 1);
  });

  it("methods fetch cannot send (TRACE, a lower-case get) → 405 with Allow from the local gateway too, 404 on no route", async () => {
    // Over a socket: fetch refuses TRACE and sends `get` as GET (HTTP methods are case-sensitive).
    const send = (method: string, path: string) => new Promise<string>((resolve, reject) => {
      const url = new URL(`${stack.apiUrl}${path}`);
      const socket = net.connect(Number(url.port), url.hostname, () => socket.write(`${method} ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\nConnection: close\r\n\r\n`));
      let received = "";
      socket.on("data", (d) => (received += d));
      socket.on("end", () => resolve(received));
      socket.on("error", reject);
    });
    for (const [method, path, status, allow] of [
      ["TRACE", "/v1/meta", 405, "GET"], ["get", "/v1/meta", 405, "GET"], ["TRACE", "/v1/meta/", 405, "GET"],
      ["TRACK", "/v1/whoami", 405, "GET"], ["TRACE", "/v1/sync/batch", 405, "POST"], ["TRACE", "/v1/meta//", 404, null], ["get", "/v1/nope", 404, null],
    ] as const) {
      const raw = await send(method, path);
      const head = raw.slice(0, raw.indexOf("\r\n\r\n"));
      expect({ method, path, status: raw.split(" ")[1], allow: /^allow: (.*)$/im.exec(head)?.[1] ?? null, envelope: /^x-request-id:/im.test(head) })
        .toEqual({ method, path, status: String(status), allow, envelope: true });
    }
  });

  it("a path outside /v1 is not found", async () => {
    expectEnvelope(await call("/meta"), 404, "NOT_FOUND");
  });
});

describe("the OpenAPI document declares what the server sends", () => {
  const SENT_HEADERS = ["x-request-id", "cache-control", "retry-after", "allow", "ratelimit-limit", "ratelimit-remaining", "ratelimit-reset", "ratelimit-policy"];
  type Responses = Record<string, { headers?: Record<string, unknown> }>;

  /** Fails unless the status and each of SENT_HEADERS the answer carries are declared for the operation. */
  function expectDeclared(doc: any, operation: string, answer: { status: number; headers: Headers }) {
    const [method, path] = operation.split(" ");
    const responses: Responses | undefined = doc.paths[`/api${path}`]?.[method.toLowerCase()]?.responses;
    expect(responses, operation).toBeDefined();
    const declared = responses![String(answer.status)];
    expect(declared, `${operation} answered ${answer.status}, which the document does not list`).toBeDefined();
    const names = Object.keys(declared.headers ?? {}).map((name) => name.toLowerCase());
    for (const header of SENT_HEADERS) {
      if (answer.headers.has(header)) expect(names, `${operation} ${answer.status} sends ${header}`).toContain(header);
    }
  }

  it("statuses and headers of real answers, and every operation's 405, 413 and Retry-After", async () => {
    const doc = (await call("/v1/openapi.json")).body;
    const user = await createTestUser();
    const huge = "x".repeat(1024 * 1024 + 10);
    expectDeclared(doc, "GET /v1/meta", await call("/v1/meta"));
    expectDeclared(doc, "GET /v1/openapi.json", await call("/v1/openapi.json"));
    expectDeclared(doc, "GET /v1/whoami", await call("/v1/whoami", { token: user.token }));
    // HEAD where a token is needed, and a method the path does not take: 405 with Allow.
    expectDeclared(doc, "GET /v1/whoami", await call("/v1/whoami", { method: "HEAD", token: user.token }));
    expectDeclared(doc, "GET /v1/meta", await call("/v1/meta", { method: "DELETE" }));
    // A body over the limit on routes that take none: the declared length is checked before routing.
    expectDeclared(doc, "DELETE /v1/auth/session", await call("/v1/auth/session", { method: "DELETE", token: user.token, rawBody: huge }));
    expectDeclared(doc, "DELETE /v1/users/me/deletion", await call("/v1/users/me/deletion", { method: "DELETE", token: user.token, rawBody: huge }));

    for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, { responses: Responses }>>)) {
      for (const [method, operation] of Object.entries(item)) {
        const statuses = Object.keys(operation.responses);
        expect(statuses, `${method} ${path}`).toEqual(expect.arrayContaining(["405", "413"]));
        for (const status of statuses.filter((s) => s === "429" || s === "503")) {
          expect(Object.keys(operation.responses[status].headers ?? {}), `${method} ${path} ${status}`).toContain("Retry-After");
        }
      }
    }
  });
});

describe("query parameters", () => {
  it("every route refuses one it does not declare: 400 VALIDATION_FAILED, unexpected_field on /<name>", async () => {
    const user = await createTestUser();
    const token = user.token;
    const requests: [string, Parameters<typeof call>[1]][] = [
      ["/v1/meta", {}],
      ["/v1/openapi.json", {}],
      ["/v1/meta", { method: "HEAD" }],
      ["/v1/whoami", { token }],
      ["/v1/devices", { token }],
      ["/v1/users/me/notifications", { token }],
      ["/v1/users/me/notifications", { method: "PUT", token, body: { categories: {}, quiet_hours: { enabled: false, start: "22:00", end: "07:00", timezone: "UTC" } } }],
      ["/v1/users/me/notifications/history", { token }],
      ["/v1/users/me/deletion", { token }],
      ["/v1/users/me/deletion", { method: "DELETE", token }],
      ["/v1/users/me/export", { token }],
      ["/v1/sync/changes", { token }],
      ["/v1/releases/check?platform=ios&channel=beta&build_number=1", { token }],
    ];
    for (const [path, options] of requests) {
      const url = `${path}${path.includes("?") ? "&" : "?"}surprise=1`;
      const response = await call(url, options);
      if (options?.method === "HEAD") {
        expect(response.status, `HEAD ${url}`).toBe(400);
        continue;
      }
      const error = expectEnvelope(response, 400, "VALIDATION_FAILED");
      expect(error.details, `${options?.method ?? "GET"} ${url}`).toEqual([expect.objectContaining({ field: "/surprise", code: "unexpected_field" })]);
      // Refused before the budget is spent: no RateLimit-* headers (docs/errors.md#query-parameters).
      expect(response.headers.get("ratelimit-remaining"), `${options?.method ?? "GET"} ${url}`).toBeNull();
    }
    // Nothing was done: the preferences are unsaved, no deletion is scheduled.
    expect((await call("/v1/users/me/notifications", { token })).body.version).toBe(0);
    expect((await call("/v1/users/me/deletion", { token })).body.status).toBe("none");
    // And the document says so: every operation lists that 400.
    const doc = (await call("/v1/openapi.json")).body;
    for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, { responses: Record<string, unknown> }>>)) {
      for (const [method, operation] of Object.entries(item)) expect(Object.keys(operation.responses), `${method} ${path}`).toContain("400");
    }
  });

  it("a parameter name Postgres cannot store (NUL) is invalid_characters on the query, not a pointer to a name it does not have", async () => {
    for (const query of ["%00=1", "a%00b=1&surprise=1"]) {
      const error = expectEnvelope(await call(`/v1/meta?${query}`), 400, "VALIDATION_FAILED");
      expect(error.details?.map((d) => [d.field, d.code]), query).toEqual([["", "invalid_characters"], ...(query.includes("surprise") ? [["/surprise", "unexpected_field"]] : [])]);
    }
  });

  it("a parameter with an empty name (?=1, ?=) is undeclared like any other: unexpected_field on \"/\"", async () => {
    const user = await createTestUser();
    for (const [path, token] of [["/v1/meta", undefined], ["/v1/whoami", user.token], ["/v1/sync/changes?limit=10&", user.token]] as const) {
      for (const query of ["=1", "=", "=1&surprise=1"]) {
        const response = await call(`${path}${path.includes("?") ? "" : "?"}${query}`, { token });
        const error = expectEnvelope(response, 400, "VALIDATION_FAILED");
        const expected = [["/", "unexpected_field"], ...(query.includes("surprise") ? [["/surprise", "unexpected_field"]] : [])];
        expect(error.details?.map((d) => [d.field, d.code]).sort(), `${path}?${query}`).toEqual(expected.sort());
        expect(response.headers.get("ratelimit-remaining"), `${path}?${query}`).toBeNull();
      }
    }
  });

  it("the Expo Updates manifest takes the query its app's updates.url carries", async () => {
    const response = await call("/v1/expo-updates/manifest?cdn=1", {
      headers: { "expo-platform": "ios", "expo-runtime-version": "1.0", "expo-channel-name": "no-such-channel" },
    });
    expect(response.status, response.text).toBe(204);
  });
});

describe("authentication", () => {
  // A route that needs a user; any authenticated route shows the same rules.
  const PROTECTED = "/v1/whoami";

  it("a valid ES256 token is accepted", async () => {
    const user = await createTestUser();
    const response = await call(PROTECTED, { token: user.token });
    expect(response.status).toBe(200);
    expect(response.body.user_id).toBe(user.userId);
  });

  it("a valid legacy HS256 token is accepted", async () => {
    const user = await createTestUser();
    const token = await signHs256(stack.keys.hsSecret, supabaseClaims({ userId: user.userId, sessionId: user.sessionId }));
    expect((await call(PROTECTED, { token })).status).toBe(200);
  });

  it("missing token → 401", async () => {
    expectEnvelope(await call(PROTECTED), 401, "UNAUTHENTICATED");
  });

  it("a non-Bearer header → 401", async () => {
    expectEnvelope(await call(PROTECTED, { headers: { authorization: "Basic dXNlcjpwYXNz" } }), 401, "UNAUTHENTICATED");
  });

  it("garbage token → 401", async () => {
    expectEnvelope(await call(PROTECTED, { token: "not.a.jwt" }), 401, "UNAUTHENTICATED");
  });

  it("forged signature (another key, same kid) → 401", async () => {
    const user = await createTestUser();
    const forger = await createSigningKeys();
    const token = await signEs256({ ...forger.privateJwk, kid: stack.keys.privateJwk.kid }, supabaseClaims({ userId: user.userId, sessionId: user.sessionId }));
    expectEnvelope(await call(PROTECTED, { token }), 401, "UNAUTHENTICATED");
  });

  it("HS256 signed with a wrong secret → 401", async () => {
    const user = await createTestUser();
    const token = await signHs256("wrong-secret-wrong-secret-wrong-secret", supabaseClaims({ userId: user.userId, sessionId: user.sessionId }));
    expectEnvelope(await call(PROTECTED, { token }), 401, "UNAUTHENTICATED");
  });

  it("unsigned token (alg none) → 401", async () => {
    const user = await createTestUser();
    const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");
    const token = `${b64({ alg: "none", typ: "JWT" })}.${b64(supabaseClaims({ userId: user.userId, sessionId: user.sessionId }))}.`;
    expectEnvelope(await call(PROTECTED, { token }), 401, "UNAUTHENTICATED");
  });

  it("expired token → 401", async () => {
    const user = await createTestUser();
    const token = await user.tokenWith({ issuedAt: Math.floor(Date.now() / 1000) - 7200, expiresInSeconds: 3600 });
    const error = expectEnvelope(await call(PROTECTED, { token }), 401, "UNAUTHENTICATED");
    expect(error.message).toMatch(/expired/);
  });

  it("a validly signed token whose exp is no plausible expiry (past what a Date holds, past year 9999, fractional) → 401, never a 500", async () => {
    const user = await createTestUser();
    const inAnHour = Math.floor(Date.now() / 1000) + 3600;
    for (const exp of [8_640_000_000_001, 1e20, 253_402_300_800, inAnHour + 0.5]) {
      const token = await user.tokenWith({ claims: { exp } });
      const error = expectEnvelope(await call(PROTECTED, { token }), 401, "UNAUTHENTICATED");
      expect(error.message, `exp=${exp}`).toMatch(/exp/);
      // The session route answers expires_at too; the token is refused before its body is looked at.
      expectEnvelope(await call("/v1/auth/session", { method: "POST", token, body: {} }), 401, "UNAUTHENTICATED");
    }
    // The last second of year 9999 is still an expiry a Date holds and the answer shows.
    const latest = await call(PROTECTED, { token: await user.tokenWith({ claims: { exp: 253_402_300_799 } }) });
    expect({ status: latest.status, expires_at: latest.body.expires_at }).toEqual({ status: 200, expires_at: "9999-12-31T23:59:59.000Z" });
  });

  it("wrong audience → 401", async () => {
    const user = await createTestUser();
    const token = await user.tokenWith({ claims: { aud: "someone-else" } });
    expectEnvelope(await call(PROTECTED, { token }), 401, "UNAUTHENTICATED");
  });

  it("a token for anon (the anon key's role) → 403", async () => {
    const now = Math.floor(Date.now() / 1000);
    const token = await signEs256(stack.keys.privateJwk, { iss: "supabase", role: "anon", iat: now, exp: now + 3600 });
    expectEnvelope(await call(PROTECTED, { token }), 403, "FORBIDDEN");
  });

  it("a token whose session was revoked → 401", async () => {
    const user = await createTestUser();
    const { adminSql } = await import("../support/harness.ts");
    await adminSql`delete from auth.sessions where id = ${user.sessionId}`;
    expectEnvelope(await call(PROTECTED, { token: user.token }), 401, "UNAUTHENTICATED");
  });

  it("a token of a user who was deleted since → 401", async () => {
    const user = await createTestUser();
    const { adminSql } = await import("../support/harness.ts");
    await adminSql`delete from auth.users where id = ${user.userId}`;
    const error = expectEnvelope(await call(PROTECTED, { token: user.token }), 401, "UNAUTHENTICATED");
    expect(error.message).toMatch(/signed out/);
  });

  it("a token without session_id → 401", async () => {
    const user = await createTestUser();
    const token = await user.tokenWith({ claims: { session_id: undefined } });
    expectEnvelope(await call(PROTECTED, { token }), 401, "UNAUTHENTICATED");
  });
});
